//go:build ignore

// split cuts a public file into N Parquet shards of consecutive rows (the
// shards' union, in name order, is the file row for row), for the Beam
// pipeline's benchmark (.ci/bench/beam_speed.sh).
//
//	go run .ci/bench/split.go -in /tmp/pate-bench/public.parquet -n 32 -dir /tmp/pate-bench/shards
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/parquet/compress"

	"github.com/pate-tool/pate/io/arrowio"
)

func main() {
	in := flag.String("in", "", "input file")
	n := flag.Int("n", 32, "shards")
	dir := flag.String("dir", "", "output folder")
	flag.Parse()
	r, err := arrowio.Open(*in, arrowio.ReadOptions{BatchSize: 1 << 16})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	if r.NumRows() <= 0 {
		log.Fatal("the input's row count is unknown")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	per := (r.NumRows() + int64(*n) - 1) / int64(*n)
	var recs []arrow.Record
	var rows int64
	shard := 0
	flush := func() {
		if len(recs) == 0 {
			return
		}
		p := filepath.Join(*dir, fmt.Sprintf("part-%05d.parquet", shard))
		if err := arrowio.WriteParquet(p, r.Schema(), recs, arrowio.ParquetOptions{Compression: compress.Codecs.Snappy, RowGroupRows: 1 << 17}); err != nil {
			log.Fatal(err)
		}
		for _, rec := range recs {
			rec.Release()
		}
		recs, rows = nil, 0
		shard++
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		for off := int64(0); off < rec.NumRows(); {
			take := min(rec.NumRows()-off, per-rows)
			recs = append(recs, rec.NewSlice(off, off+take))
			rows += take
			off += take
			if rows == per {
				flush()
			}
		}
		rec.Release()
	}
	flush()
}
