//go:build ignore

// gen writes the synthetic data of the speed comparison with the Python peer
// (shared/peers/sklearn_pate.py): features ~ N(0, 1), label = argmax over
// classes of x·W + noise with W ~ N(0, 1/d) and noise ~ N(0, 0.5²), as the
// peer makes them. It writes private.parquet (features and label), and
// public.parquet (features only), Snappy-compressed like pyarrow's default.
//
//	go run .ci/bench/gen.go -dir /tmp/pate-bench -private 100000 -public 1000000 -features 64 -classes 2
//
// With -embedding the features are one column "emb" of type
// fixed_size_list<float32>[features] (what DuckDB's FLOAT[384] and Polars'
// Array(Float32, 384) give), and the same rows are also written as .npy
// files (x_private.npy, y_private.npy, x_public.npy) for the peer's
// --x-private, --y-private and --x-public options:
//
//	go run .ci/bench/gen.go -dir /tmp/pate-embed-384 -features 384 -embedding
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

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
	flag.BoolVar(&embedding, "embedding", false, "write the features as one fixed_size_list<float32> column \"emb\", and the rows as .npy files too")
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
	if embedding {
		if err := writeEmbedding(*dir, "private", *nPriv, *d, *k, w, rng, true); err != nil {
			log.Fatal(err)
		}
		if err := writeEmbedding(*dir, "public", *nPub, *d, *k, w, rng, false); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := write(filepath.Join(*dir, "private.parquet"), *nPriv, *d, *k, w, rng, true); err != nil {
		log.Fatal(err)
	}
	if err := write(filepath.Join(*dir, "public.parquet"), *nPub, *d, *k, w, rng, false); err != nil {
		log.Fatal(err)
	}
}

// label draws the label of the row x as the peer does: the argmax over
// classes of x·W plus N(0, 0.5²) noise.
func label(x []float64, w []float64, k int, rng *rand.Rand) int {
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
	return best
}

var (
	compression = compress.Codecs.Snappy
	dictionary  bool
	embedding   bool
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
				b.Field(d).(*array.Int64Builder).Append(int64(label(x, w, k, rng)))
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

// writeEmbedding writes DIR/NAME.parquet with the features as one column
// emb of type fixed_size_list<float32>[d] (nullable list and elements, as
// pyarrow and DuckDB declare them, though none is null), and the same rows
// as DIR/x_NAME.npy (float32, n x d) and, with labels, DIR/y_NAME.npy
// (int64) and a label column.
func writeEmbedding(dir, name string, n, d, k int, w []float64, rng *rand.Rand, withLabel bool) error {
	fields := []arrow.Field{{Name: "emb", Type: arrow.FixedSizeListOf(int32(d), arrow.PrimitiveTypes.Float32), Nullable: true}}
	if withLabel {
		fields = append(fields, arrow.Field{Name: "label", Type: arrow.PrimitiveTypes.Int64})
	}
	schema := arrow.NewSchema(fields, nil)
	f, err := os.Create(filepath.Join(dir, name+".parquet"))
	if err != nil {
		return err
	}
	defer f.Close()
	xf, err := newNpy(filepath.Join(dir, "x_"+name+".npy"), "<f4", n, d)
	if err != nil {
		return err
	}
	var yf *npyFile
	if withLabel {
		if yf, err = newNpy(filepath.Join(dir, "y_"+name+".npy"), "<i8", n, 0); err != nil {
			return err
		}
	}
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compression),
		parquet.WithDictionaryDefault(dictionary),
		parquet.WithRootRepetition(parquet.Repetitions.Required),
		parquet.WithMaxRowGroupLength(64<<10), // 100 MB decoded at 384 float32s
	)
	// The Arrow schema goes in the footer (as pyarrow and Polars store it):
	// without it the column reads back as a variable-length list.
	fw, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return err
	}
	mem := memory.DefaultAllocator
	const batch = 16 << 10
	x := make([]float64, d)
	x32 := make([]float32, d)
	for start := 0; start < n; start += batch {
		m := min(batch, n-start)
		b := array.NewRecordBuilder(mem, schema)
		lb := b.Field(0).(*array.FixedSizeListBuilder)
		vb := lb.ValueBuilder().(*array.Float32Builder)
		vb.Reserve(m * d)
		for i := 0; i < m; i++ {
			for j := range x {
				x32[j] = float32(rng.NormFloat64())
				x[j] = float64(x32[j])
			}
			lb.Append(true)
			vb.AppendValues(x32, nil)
			if err := binary.Write(xf.w, binary.LittleEndian, x32); err != nil {
				return err
			}
			if withLabel {
				y := int64(label(x, w, k, rng))
				b.Field(1).(*array.Int64Builder).Append(y)
				if err := binary.Write(yf.w, binary.LittleEndian, y); err != nil {
					return err
				}
			}
		}
		rec := b.NewRecord()
		b.Release()
		if err := fw.Write(rec); err != nil {
			rec.Release()
			return err
		}
		rec.Release()
	}
	if err := xf.close(); err != nil {
		return err
	}
	if yf != nil {
		if err := yf.close(); err != nil {
			return err
		}
	}
	return fw.Close()
}

// npyFile is a .npy file (format 1.0) being written: a header, then the
// raw little-endian values in row-major order.
type npyFile struct {
	f *os.File
	w *bufio.Writer
}

// newNpy starts an .npy file of n rows of dtype descr, n x d (d > 0) or
// a vector of n (d == 0).
func newNpy(path, descr string, n, d int) (*npyFile, error) {
	shape := fmt.Sprintf("(%d,)", n)
	if d > 0 {
		shape = fmt.Sprintf("(%d, %d)", n, d)
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	// magic (6) + version (2) + length (2) + header, padded with spaces
	// and a newline to a multiple of 64 bytes.
	pad := 64 - (10+len(h)+1)%64
	if pad == 64 {
		pad = 0
	}
	h += strings.Repeat(" ", pad) + "\n"
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("\x93NUMPY\x01\x00")
	binary.Write(w, binary.LittleEndian, uint16(len(h)))
	w.WriteString(h)
	return &npyFile{f: f, w: w}, nil
}

func (n *npyFile) close() error {
	if err := n.w.Flush(); err != nil {
		n.f.Close()
		return err
	}
	return n.f.Close()
}
