//go:build ignore

// gen writes the synthetic data of the speed comparison with the Python peer
// (shared/peers/sklearn_pate.py): features ~ N(0, 1), label = argmax over
// classes of x·W + noise with W ~ N(0, 1/d) and noise ~ N(0, 0.5²), as the
// peer makes them. It writes private.parquet (features and label), and
// public.parquet (features only), Snappy-compressed like pyarrow's default.
//
//	go run .ci/bench/gen.go -dir /tmp/pate-bench -private 100000 -public 1000000 -features 64 -classes 2
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

func main() {
	dir := flag.String("dir", "/tmp/pate-bench", "output folder")
	nPriv := flag.Int("private", 100_000, "private rows")
	nPub := flag.Int("public", 1_000_000, "public rows")
	d := flag.Int("features", 64, "features")
	k := flag.Int("classes", 2, "classes")
	seed := flag.Uint64("seed", 0, "seed")
	codec := flag.String("compression", "snappy", "snappy, zstd or none")
	flag.BoolVar(&dictionary, "dictionary", false, "dictionary-encode the columns (pyarrow's default; pate then reads them with Arrow's reader)")
	flag.IntVar(&rowGroup, "row-group", 0, "rows per row group (pyarrow's default: 1048576); 0: a row group per 65,536-row batch")
	flag.Parse()
	switch *codec {
	case "snappy":
		compression = compress.Codecs.Snappy
	case "zstd":
		compression = compress.Codecs.Zstd
	case "none":
		compression = compress.Codecs.Uncompressed
	default:
		log.Fatalf("-compression %q: snappy, zstd or none", *codec)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(*seed, 1))
	w := make([]float64, *d**k)
	for i := range w {
		w[i] = rng.NormFloat64() / math.Sqrt(float64(*d))
	}
	if err := write(filepath.Join(*dir, "private.parquet"), *nPriv, *d, *k, w, rng, true); err != nil {
		log.Fatal(err)
	}
	if err := write(filepath.Join(*dir, "public.parquet"), *nPub, *d, *k, w, rng, false); err != nil {
		log.Fatal(err)
	}
}

var (
	compression = compress.Codecs.Snappy
	dictionary  bool
	rowGroup    int
)

func write(path string, n, d, k int, w []float64, rng *rand.Rand, withLabel bool) error {
	fields := make([]arrow.Field, 0, d+1)
	for j := 0; j < d; j++ {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("x%d", j), Type: arrow.PrimitiveTypes.Float64})
	}
	if withLabel {
		fields = append(fields, arrow.Field{Name: "label", Type: arrow.PrimitiveTypes.Int64})
	}
	schema := arrow.NewSchema(fields, nil)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compression),
		parquet.WithDictionaryDefault(dictionary),
		parquet.WithRootRepetition(parquet.Repetitions.Required),
		parquet.WithMaxRowGroupLength(int64(max(rowGroup, 128<<10))),
	)
	fw, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	mem := memory.DefaultAllocator
	const batch = 64 << 10
	x := make([]float64, d)
	for start := 0; start < n; start += batch {
		m := min(batch, n-start)
		b := array.NewRecordBuilder(mem, schema)
		for i := 0; i < m; i++ {
			for j := range x {
				x[j] = rng.NormFloat64()
				b.Field(j).(*array.Float64Builder).Append(x[j])
			}
			if withLabel {
				best, bestV := 0, math.Inf(-1)
				for c := 0; c < k; c++ {
					v := 0.5 * rng.NormFloat64()
					for j := range x {
						v += x[j] * w[j*k+c]
					}
					if v > bestV {
						best, bestV = c, v
					}
				}
				b.Field(d).(*array.Int64Builder).Append(int64(best))
			}
		}
		rec := b.NewRecord()
		b.Release()
		// Write makes a row group of each batch; WriteBuffered fills row
		// groups up to -row-group rows.
		write := fw.Write
		if rowGroup > 0 {
			write = fw.WriteBuffered
		}
		if err := write(rec); err != nil {
			rec.Release()
			return err
		}
		rec.Release()
	}
	return fw.Close()
}
