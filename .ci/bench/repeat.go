//go:build ignore

// repeat writes a public file of N rows made from the rows of another,
// repeated in order, each float moved by uniform jitter of ±jitter times
// its column's standard deviation and, with -int-step P, each integer
// moved by ±1 with probability P (other columns copied): a large public
// file with a real set's shape, for the default's timings
// (.ci/bench/model_speed.sh). Without -int-step a set of integer columns
// (letter's) repeats its rows exactly, which a search that looks each
// distinct row up once turns to its advantage; -int-step 0.1 makes most
// rows distinct.
//
//	go run .ci/bench/repeat.go -in /tmp/pate-datasets/letter_public.parquet -rows 1000000 -out /tmp/letter_1m.parquet
package main

import (
	"errors"
	"flag"
	"io"
	"log"
	"math"
	"math/rand/v2"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"

	"github.com/pate-tool/pate/io/arrowio"
)

func main() {
	in := flag.String("in", "", "input file")
	out := flag.String("out", "", "output Parquet file")
	rows := flag.Int64("rows", 1_000_000, "rows to write")
	jitter := flag.Float64("jitter", 0.05, "jitter, in standard deviations of each column")
	intStep := flag.Float64("int-step", 0, "probability that an integer moves by ±1")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	r, err := arrowio.Open(*in, arrowio.ReadOptions{BatchSize: 1 << 16})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var src []arrow.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		src = append(src, rec)
	}
	schema := r.Schema()
	sd := make([]float64, schema.NumFields())
	for c := range sd {
		var s, s2, n float64
		for _, rec := range src {
			for i := 0; i < int(rec.NumRows()); i++ {
				if v, ok := number(rec.Column(c), i); ok {
					s, s2, n = s+v, s2+v*v, n+1
				}
			}
		}
		if n > 1 {
			sd[c] = math.Sqrt(math.Max(s2/n-(s/n)*(s/n), 0))
		}
	}
	rng := rand.New(rand.NewPCG(*seed, 0x726570656174))
	mem := memory.DefaultAllocator
	var outRecs []arrow.Record
	var written int64
	for written < *rows {
		for _, rec := range src {
			if written >= *rows {
				break
			}
			n := min(rec.NumRows(), *rows-written)
			b := array.NewRecordBuilder(mem, schema)
			for c := 0; c < schema.NumFields(); c++ {
				col, fb := rec.Column(c), b.Field(c)
				for i := 0; i < int(n); i++ {
					if col.IsNull(i) {
						fb.AppendNull()
						continue
					}
					j := *jitter * sd[c] * (2*rng.Float64() - 1)
					switch a := col.(type) {
					case *array.Float64:
						fb.(*array.Float64Builder).Append(a.Value(i) + j)
					case *array.Float32:
						fb.(*array.Float32Builder).Append(a.Value(i) + float32(j))
					case *array.Int64:
						v := a.Value(i)
						if u := rng.Float64(); u < *intStep/2 {
							v--
						} else if u < *intStep {
							v++
						}
						fb.(*array.Int64Builder).Append(v)
					default:
						slice := array.NewSlice(col, int64(i), int64(i+1))
						if err := fb.AppendValueFromString(slice.ValueStr(0)); err != nil {
							log.Fatal(err)
						}
						slice.Release()
					}
				}
			}
			outRecs = append(outRecs, b.NewRecord())
			b.Release()
			written += n
		}
	}
	if err := arrowio.WriteParquet(*out, schema, outRecs, arrowio.ParquetOptions{Compression: compress.Codecs.Snappy, RowGroupRows: 1 << 16}); err != nil {
		log.Fatal(err)
	}
}

// number is row i of col as a float64, when col holds numbers.
func number(col arrow.Array, i int) (float64, bool) {
	if col.IsNull(i) {
		return 0, false
	}
	switch a := col.(type) {
	case *array.Float64:
		return a.Value(i), true
	case *array.Float32:
		return float64(a.Value(i)), true
	}
	return 0, false
}
