//go:build ignore

// same_rows checks that the Arrow/Parquet file WANT holds, row for row and
// column by column, the rows of the files GOT... read one after the other
// (the union of labelled shards against the whole file labelled at once).
// It prints the rows compared, or the first difference and exits 1.
//
//	go run .ci/bench/same_rows.go WANT GOT...
package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/pate-tool/pate/io/arrowio"
)

// rows hands out the rows of a sequence of files in slices.
type rows struct {
	files []string
	r     *arrowio.Reader
	rec   arrow.Record
	off   int64
}

// next returns the current batch and offset, reading on as needed; nil at
// the end of the last file.
func (s *rows) next() (arrow.Record, int64) {
	for s.rec == nil || s.off == s.rec.NumRows() {
		if s.rec != nil {
			s.rec.Release()
			s.rec = nil
		}
		if s.r == nil {
			if len(s.files) == 0 {
				return nil, 0
			}
			var err error
			if s.r, err = arrowio.Open(s.files[0], arrowio.ReadOptions{BatchSize: 1 << 16}); err != nil {
				log.Fatal(err)
			}
			s.files = s.files[1:]
		}
		rec, err := s.r.Read()
		if errors.Is(err, io.EOF) {
			s.r.Close()
			s.r = nil
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		s.rec, s.off = rec, 0
	}
	return s.rec, s.off
}

func main() {
	if len(os.Args) < 3 {
		log.Fatal("usage: same_rows WANT GOT...")
	}
	want, got := &rows{files: os.Args[1:2]}, &rows{files: os.Args[2:]}
	var n int64
	for {
		a, ao := want.next()
		b, bo := got.next()
		if a == nil || b == nil {
			if a != nil || b != nil {
				fmt.Printf("different row counts: %d rows compared, then one side ended\n", n)
				os.Exit(1)
			}
			break
		}
		if a.NumCols() != b.NumCols() {
			fmt.Printf("%d columns against %d\n", a.NumCols(), b.NumCols())
			os.Exit(1)
		}
		k := min(a.NumRows()-ao, b.NumRows()-bo)
		for c := 0; c < int(a.NumCols()); c++ {
			if a.Schema().Field(c).Name != b.Schema().Field(c).Name ||
				!array.SliceEqual(a.Column(c), ao, ao+k, b.Column(c), bo, bo+k) {
				fmt.Printf("column %s differs in rows %d to %d\n", a.Schema().Field(c).Name, n, n+k)
				os.Exit(1)
			}
		}
		want.off += k
		got.off += k
		n += k
	}
	fmt.Printf("same rows: %d rows, every column equal\n", n)
}
