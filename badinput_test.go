package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/pate-tool/pate/label/ledger"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// The bad-input corpus lives in testdata/bad (see its README.md). The files
// are small and committed; `go test -run TestBadInputCorpus -update-bad .`
// regenerates them from the generators below.
var updateBad = flag.Bool("update-bad", false, "regenerate the bad-input corpus in testdata/bad")

const badDir = "testdata/bad"

// col is one column of a generated table.
type col struct {
	name string
	typ  arrow.DataType
	vals []any // nil is a null
}

// table builds a record from columns (all the same length).
func table(mem memory.Allocator, cols ...col) arrow.Record {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i, c := range cols {
		for _, v := range c.vals {
			appendAny(b.Field(i), v)
		}
	}
	return b.NewRecord()
}

func appendAny(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Int64Builder:
		b.Append(int64(v.(int)))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.ListBuilder:
		b.Append(true)
		for _, x := range v.([]float64) {
			b.ValueBuilder().(*array.Float64Builder).Append(x)
		}
	case *array.StructBuilder:
		b.Append(true)
		b.FieldBuilder(0).(*array.Float64Builder).Append(v.(float64))
	default:
		panic(fmt.Sprintf("appendAny: %T", b))
	}
}

// sensitiveCols is a small, learnable sensitive table: y = 1 when x > 0.
func sensitiveCols(n int) (x, z, unit, y col) {
	x = col{name: "x", typ: arrow.PrimitiveTypes.Float64}
	z = col{name: "z", typ: arrow.PrimitiveTypes.Float64}
	unit = col{name: "unit", typ: arrow.BinaryTypes.String}
	y = col{name: "y", typ: arrow.PrimitiveTypes.Int64}
	for i := range n {
		xv := float64(i%20) - 9.5
		x.vals = append(x.vals, xv)
		z.vals = append(z.vals, float64((i*7)%11))
		unit.vals = append(unit.vals, fmt.Sprintf("u%02d", i%30))
		lab := 0
		if xv > 0 {
			lab = 1
		}
		y.vals = append(y.vals, lab)
	}
	return x, z, unit, y
}

func publicCols(n int) (x, z col) {
	x = col{name: "x", typ: arrow.PrimitiveTypes.Float64}
	z = col{name: "z", typ: arrow.PrimitiveTypes.Float64}
	for i := range n {
		x.vals = append(x.vals, float64(i%9)-4)
		z.vals = append(z.vals, float64(i%5))
	}
	return x, z
}

func fill(c col, v any) col {
	out := col{name: c.name, typ: c.typ, vals: make([]any, len(c.vals))}
	for i := range out.vals {
		out.vals[i] = v
	}
	return out
}

func parquetBytes(t *testing.T, rec arrow.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false))
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ipcFileBytes(t *testing.T, rec arrow.Record) []byte {
	t.Helper()
	var buf seekBuffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.b
}

func ipcStreamBytes(t *testing.T, rec arrow.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// seekBuffer is an in-memory io.WriteSeeker for the IPC file writer.
type seekBuffer struct {
	b   []byte
	pos int
}

func (s *seekBuffer) Write(p []byte) (int, error) {
	if need := s.pos + len(p); need > len(s.b) {
		s.b = append(s.b, make([]byte, need-len(s.b))...)
	}
	copy(s.b[s.pos:], p)
	s.pos += len(p)
	return len(p), nil
}

func (s *seekBuffer) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		s.pos = int(off)
	case io.SeekCurrent:
		s.pos += int(off)
	case io.SeekEnd:
		s.pos = len(s.b) + int(off)
	}
	return int64(s.pos), nil
}

// corpus returns every generated file of testdata/bad by name.
func corpus(t *testing.T) map[string][]byte {
	mem := memory.NewGoAllocator()
	files := map[string][]byte{}
	rec := func(cols ...col) arrow.Record { return table(mem, cols...) }
	pq := func(name string, cols ...col) []byte {
		r := rec(cols...)
		defer r.Release()
		b := parquetBytes(t, r)
		files[name] = b
		return b
	}
	x, z, unit, y := sensitiveCols(60)
	sens := pq("sens.parquet", x, z, unit, y)
	px, pz := publicCols(20)
	pq("pub.parquet", px, pz)

	// Corrupt containers.
	files["truncated.parquet"] = append([]byte(nil), sens[:len(sens)/2]...)
	files["truncated_tail.parquet"] = append([]byte(nil), sens[:len(sens)-3]...)
	footer := append([]byte(nil), sens...)
	flen := int(footer[len(footer)-8]) | int(footer[len(footer)-7])<<8
	for i := len(footer) - 8 - flen; i < len(footer)-8-flen/2; i++ {
		footer[i] = 0xff
	}
	files["corrupt_footer.parquet"] = footer
	pages := append([]byte(nil), sens...)
	for i := 4; i < 40; i++ {
		pages[i] = byte(0xa5 ^ i)
	}
	files["corrupt_pages.parquet"] = pages
	bigfooter := append([]byte(nil), sens...)
	copy(bigfooter[len(bigfooter)-8:], []byte{0xff, 0xff, 0xff, 0x7f})
	files["footer_length_huge.parquet"] = bigfooter
	magic := append([]byte(nil), sens...)
	copy(magic, "PAR0")
	copy(magic[len(magic)-4:], "PAR0")
	files["wrong_magic.parquet"] = magic
	files["empty.parquet"] = []byte{}

	srec := rec(x, z, unit, y)
	arrowFile := ipcFileBytes(t, srec)
	arrowStream := ipcStreamBytes(t, srec)
	srec.Release()
	files["truncated.arrow"] = append([]byte(nil), arrowFile[:len(arrowFile)*2/3]...)
	// The file reader takes the schema from the footer: corrupt that.
	cor := append([]byte(nil), arrowFile...)
	alen := int(cor[len(cor)-10]) | int(cor[len(cor)-9])<<8
	for i := len(cor) - 10 - alen; i < len(cor)-10-alen/2; i++ {
		cor[i] = 0xee
	}
	files["corrupt_footer.arrow"] = cor
	// The leading schema message is not what the file reader uses, but a
	// garbled one must not go unnoticed by a stream-style reader either.
	lead := append([]byte(nil), arrowFile...)
	for i := 8; i < 8+64 && i < len(lead); i++ {
		lead[i] = 0xee
	}
	files["corrupt_leading_schema.arrow"] = lead
	wm := append([]byte(nil), arrowFile...)
	copy(wm, "ARROW9")
	files["wrong_magic.arrow"] = wm
	files["truncated.arrows"] = append([]byte(nil), arrowStream[:len(arrowStream)*3/4]...)

	// Empty and degenerate tables.
	e := func(c col) col { return col{name: c.name, typ: c.typ} }
	pq("zero_rows.parquet", e(x), e(z), e(unit), e(y))
	pq("zero_rows_public.parquet", e(px), e(pz))
	zc := rec()
	files["zero_columns.arrow"] = ipcFileBytes(t, zc)
	zc.Release()
	pq("label_all_null.parquet", x, z, unit, fill(y, nil))
	pq("single_class.parquet", x, z, unit, fill(y, 1))
	many := col{name: "y", typ: arrow.PrimitiveTypes.Int64}
	for i := range x.vals {
		many.vals = append(many.vals, i)
	}
	pq("many_classes.parquet", x, z, unit, many)

	// Non-finite features: the encoder imputes NaN and clips ±Inf.
	nx := col{name: "x", typ: x.typ, vals: append([]any(nil), x.vals...)}
	nx.vals[0], nx.vals[1], nx.vals[2], nx.vals[3] = math.NaN(), math.Inf(1), math.Inf(-1), nil
	pq("nan_inf_sens.parquet", nx, z, unit, y)
	npx := col{name: "x", typ: px.typ, vals: append([]any(nil), px.vals...)}
	npx.vals[0], npx.vals[1], npx.vals[2], npx.vals[3] = math.NaN(), math.Inf(1), math.Inf(-1), nil
	pq("nan_inf_pub.parquet", npx, pz)

	// Types and columns that do not fit.
	sx := col{name: "x", typ: arrow.BinaryTypes.String}
	for i := range px.vals {
		sx.vals = append(sx.vals, fmt.Sprintf("n%d", i))
	}
	pq("pub_string_feature.parquet", sx, pz)
	pq("pub_missing_feature.parquet", pz)
	dup := rec(x, z, unit, y, col{name: "x", typ: arrow.PrimitiveTypes.Float64, vals: z.vals})
	files["duplicate_columns.arrow"] = ipcFileBytes(t, dup)
	dup.Release()
	st := col{name: "s", typ: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Float64, Nullable: true})}
	lst := col{name: "l", typ: arrow.ListOf(arrow.PrimitiveTypes.Float64)}
	for i := range x.vals {
		st.vals = append(st.vals, float64(i))
		lst.vals = append(lst.vals, []float64{float64(i), 1})
	}
	pq("struct_feature.parquet", x, z, st, y)
	pq("list_feature.parquet", x, z, lst, y)
	pq("list_label.parquet", x, z, col{name: "y", typ: lst.typ, vals: lst.vals})
	nu := col{name: "unit", typ: unit.typ, vals: append([]any(nil), unit.vals...)}
	nu.vals[7] = nil
	pq("unit_nulls.parquet", x, z, nu, y)

	// CSV.
	files["ragged.csv"] = []byte("x,z,y\n1,2,0\n3,4\n5,6,1,9\n")
	files["binary.csv"] = []byte("x,z,y\n\x00\x01\x02\xff\xfe\n")
	files["unterminated_quote.csv"] = []byte("x,z,y\n1,\"2,0\n3,4,1\n")
	return files
}

// badFile is the path of a corpus file.
func badFile(name string) string { return filepath.Join(badDir, name) }

// TestBadInputCorpusUpToDate regenerates the corpus under -update-bad, and
// otherwise checks every generated file is committed.
func TestBadInputCorpusUpToDate(t *testing.T) {
	files := corpus(t)
	if *updateBad {
		if err := os.MkdirAll(badDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			if err := os.WriteFile(badFile(name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name := range files {
		if _, err := os.Stat(badFile(name)); err != nil {
			t.Errorf("%s is not in the corpus (run go test -run TestBadInputCorpus -update-bad .): %v", name, err)
		}
	}
}

// failAfter is a writer that fails once n bytes have passed: a disk that
// fills up mid-way, or a reader that hangs up.
type failAfter struct {
	n       int
	written int
}

var errDiskFull = errors.New("no space left on device (injected)")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.written+len(p) > f.n {
		k := max(f.n-f.written, 0)
		f.written += k
		return k, errDiskFull
	}
	f.written += len(p)
	return len(p), nil
}

// TestLabelStdoutWriteFails: a stdout that fails mid-way or at once (a full
// disk, a reader that hangs up) ends the run with exit 1 and a one-line
// message naming -o - and the cause.
// The rest of the bad-input corpus is run by the scripts in
// testdata/script/label_corpus_*.txtar.
//
// It runs pate in-process, to hand it the failing writer, and so is not
// parallel: urfave/cli's package variables allow one run per process at a
// time.
func TestLabelStdoutWriteFails(t *testing.T) {
	tests := []struct {
		name  string
		after int
	}{
		{"disk full mid-way on stdout", 600},
		{"disk full at once on stdout", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"pate", "label", "-o", "-", "--ledger", t.TempDir(), "--private", badFile("sens.parquet"), "--label", "y",
				"--public", badFile("pub.parquet"), "--features", "x,z", "--teachers", "3", "--epsilon", "1",
				"--delta", "1e-5", "--classes", "0,1", "--seed", "1", "--quiet"}
			var stderr bytes.Buffer
			code := runNoPanic(t, args, strings.NewReader(""), &failAfter{n: tc.after}, &stderr)
			msg := strings.TrimSpace(stderr.String())
			if code != exitFailure {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitFailure, msg)
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") || strings.Contains(msg, "\n") {
				t.Errorf("message is not one line or looks like a panic: %q", msg)
			}
			for _, w := range []string{"-o -", "no space left"} {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not name %s", msg, w)
				}
			}
		})
	}
}

// checkCorpusUntouched: the corpus is read-only input, so no run may leave
// a temporary file beside it.
func checkCorpusUntouched(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(badDir)
	if err != nil {
		t.Fatal(err)
	}
	files := corpus(t)
	for _, e := range entries {
		if _, ok := files[e.Name()]; !ok && e.Name() != "README.md" {
			t.Errorf("%s/%s is neither a corpus file nor the README (left by a run?)", badDir, e.Name())
		}
	}
}

// checker is what the ledger checks need of a test or a script.
type checker interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// checkFailedRunsCharged: every run of the ledger in dir that failed is
// either closed at zero (it never ran: its output could not be created)
// or, without an end entry, charged its maximum.
func checkFailedRunsCharged(t checker, dir string) {
	t.Helper()
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	ds, err := l.Datasets()
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	for _, d := range ds {
		for _, r := range d.Runs {
			if r.Finished && r.Charged != 0 || !r.Finished && r.Charged != r.MaxRho {
				t.Errorf("a failed run is charged ρ = %g (max %g, ended %v)", r.Charged, r.MaxRho, r.Finished)
			}
		}
	}
}

// runNoPanic runs the CLI in-process and turns a panic into a test failure
// with its value, so one bad case does not hide the others.
func runNoPanic(t *testing.T, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	return run(context.Background(), args, stdin, stdout, stderr)
}

// ledgerCharge is the ρ the ledger in dir charges over all its runs.
func ledgerCharge(t checker, dir string) float64 {
	t.Helper()
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	ds, err := l.Datasets()
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	total := 0.0
	for _, d := range ds {
		for _, r := range d.Runs {
			total += r.Charged
		}
	}
	return total
}
