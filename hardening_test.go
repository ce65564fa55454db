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

// TestBadInputCorpus runs the CLI over every case of the corpus: each ends
// with its documented exit code, a one-line message naming the file, column
// or flag, no panic and no output file.
func TestBadInputCorpus(t *testing.T) {
	sens, pub := badFile("sens.parquet"), badFile("pub.parquet")
	args := func(private, public string, extra ...string) []string {
		a := []string{"label", "--private", private, "--label", "y", "--public", public,
			"--features", "x,z", "--teachers", "3", "--epsilon", "1", "--delta", "1e-5",
			"--classes", "0,1", "--seed", "1", "--quiet"}
		return append(a, extra...)
	}
	// with replaces the value of a flag in a.
	with := func(a []string, flag, value string) []string {
		out := append([]string(nil), a...)
		for i := range out {
			if out[i] == flag {
				out[i+1] = value
				return out
			}
		}
		return append(out, flag, value)
	}
	without := func(a []string, flag string) []string {
		var out []string
		for i := 0; i < len(a); i++ {
			if a[i] == flag {
				i++
				continue
			}
			out = append(out, a[i])
		}
		return out
	}
	streamBytes, err := os.ReadFile(badFile("truncated.arrows"))
	if err != nil && !*updateBad {
		t.Fatal(err)
	}
	notDir := t.TempDir()
	blocker := filepath.Join(notDir, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		args   []string
		stdin  string
		stdout io.Writer // nil: a buffer
		out    string    // -o target; "" means a file in a fresh folder
		code   int
		want   []string // substrings of the one-line message; none for exit 0
		// refused by the private class discovery: the refusal reveals its
		// output, so the ledger charges its ρ though no label was released
		discovery bool
	}{
		// Broken containers.
		{name: "truncated parquet", args: args(badFile("truncated.parquet"), pub), code: 2, want: []string{"truncated.parquet"}},
		{name: "parquet without its tail magic", args: args(badFile("truncated_tail.parquet"), pub), code: 2, want: []string{"truncated_tail.parquet"}},
		{name: "corrupt parquet footer", args: args(badFile("corrupt_footer.parquet"), pub), code: 2, want: []string{"corrupt_footer.parquet"}},
		{name: "corrupt parquet pages", args: args(badFile("corrupt_pages.parquet"), pub), code: 2, want: []string{"corrupt_pages.parquet"}},
		{name: "parquet footer length huge", args: args(badFile("footer_length_huge.parquet"), pub), code: 2, want: []string{"footer_length_huge.parquet"}},
		{name: "wrong parquet magic", args: args(badFile("wrong_magic.parquet"), pub), code: 2, want: []string{"wrong_magic.parquet"}},
		{name: "empty file", args: args(sens, badFile("empty.parquet")), code: 2, want: []string{"empty.parquet", "--public"}},
		{name: "truncated arrow file", args: args(badFile("truncated.arrow"), pub), code: 2, want: []string{"truncated.arrow"}},
		{name: "corrupt arrow footer", args: args(badFile("corrupt_footer.arrow"), pub), code: 2, want: []string{"corrupt_footer.arrow"}},
		// The file reader takes the schema from the footer, as Arrow C++
		// does; the leading copy is unused, so this file reads fine.
		{name: "corrupt leading schema of an arrow file", args: args(badFile("corrupt_leading_schema.arrow"), pub), code: 0},
		{name: "wrong arrow magic", args: args(badFile("wrong_magic.arrow"), pub), code: 2, want: []string{"wrong_magic.arrow"}},
		{name: "truncated arrow stream", args: args(badFile("truncated.arrows"), pub), code: 2, want: []string{"truncated.arrows"}},
		{name: "stdin closed mid-stream", args: args(sens, "-"), stdin: string(streamBytes), code: 2, want: []string{"stdin"}},
		{name: "stdin empty", args: args(sens, "-"), stdin: "", code: 2, want: []string{"stdin"}},
		// A sensitive CSV is read with declared types and leniently: a
		// record of the wrong width is skipped, a stray quote is data, so
		// whether the run goes ahead does not depend on one row. A public
		// CSV is still refused, naming the file.
		{name: "ragged csv", args: args(badFile("ragged.csv"), pub), code: 0},
		{name: "binary bytes in a csv", args: args(badFile("binary.csv"), pub), code: 0},
		{name: "unterminated csv quote", args: args(badFile("unterminated_quote.csv"), pub), code: 0},
		{name: "ragged public csv", args: args(sens, badFile("ragged.csv"), "--keep", "x,z"), code: 2, want: []string{"ragged.csv", "--public"}},
		{name: "unterminated quote in a public csv", args: args(sens, badFile("unterminated_quote.csv"), "--keep", "x,z"), code: 2, want: []string{"unterminated_quote.csv", "--public"}},

		// Degenerate tables.
		// No rows, no usable label, fewer units than teachers: refusing
		// would tell such a file from its neighbour with one unit more.
		// With --classes every teacher still votes (those without rows the
		// fixed class); without them the private class discovery, a
		// charged test, is what refuses.
		{name: "sensitive with zero rows", args: args(badFile("zero_rows.parquet"), pub), code: 0},
		{name: "sensitive with zero rows, classes discovered", args: without(args(badFile("zero_rows.parquet"), pub), "--classes"), code: 2, want: []string{`"y"`, "--classes"}, discovery: true},
		{name: "public with zero rows", args: args(sens, badFile("zero_rows_public.parquet")), code: 2, want: []string{"zero_rows_public.parquet"}},
		{name: "zero columns", args: args(badFile("zero_columns.arrow"), pub), code: 2, want: []string{"zero_columns.arrow", `"y"`}},
		{name: "label only nulls", args: args(badFile("label_all_null.parquet"), pub), code: 0},
		{name: "label only nulls, classes discovered", args: without(args(badFile("label_all_null.parquet"), pub), "--classes"), code: 2, want: []string{`"y"`, "--classes"}, discovery: true},
		{name: "single class, classes discovered", args: without(args(badFile("single_class.parquet"), pub), "--classes"), code: 2, want: []string{`"y"`, "--classes"}, discovery: true},
		{name: "more classes than the votes allow", args: without(args(badFile("many_classes.parquet"), pub), "--classes"), code: 2, want: []string{`"y"`, "--classes"}, discovery: true},
		// Rows whose label is outside the public class set cannot be voted
		// for and are left out of the teachers' data. That is not an error:
		// failing would reveal a property of the sensitive data outside the
		// mechanism.
		{name: "label values outside --classes", args: args(badFile("many_classes.parquet"), pub), code: 0},

		// Non-finite values are data, not errors: imputed and clipped.
		{name: "NaN and Inf sensitive features", args: args(badFile("nan_inf_sens.parquet"), pub), code: 0},
		{name: "NaN and Inf public features", args: args(sens, badFile("nan_inf_pub.parquet")), code: 0},

		// Columns that do not fit.
		{name: "strings where numbers are expected", args: args(sens, badFile("pub_string_feature.parquet")), code: 2, want: []string{`"x"`, "pub_string_feature.parquet"}},
		{name: "public missing a feature", args: args(sens, badFile("pub_missing_feature.parquet")), code: 2, want: []string{`"x"`, "pub_missing_feature.parquet"}},
		{name: "duplicated column names", args: args(badFile("duplicate_columns.arrow"), pub), code: 2, want: []string{"duplicate_columns.arrow", `"x"`}},
		{name: "struct column as a feature", args: with(args(badFile("struct_feature.parquet"), pub), "--features", "x,s"), code: 2, want: []string{"struct_feature.parquet", `"s"`}},
		{name: "list column as a feature", args: with(args(badFile("list_feature.parquet"), pub), "--features", "x,l"), code: 2, want: []string{"list_feature.parquet", `"l"`}},
		{name: "list column as the label", args: args(badFile("list_label.parquet"), pub), code: 2, want: []string{"list_label.parquet", `"y"`}},
		// Rows without a unit are dropped silently.
		{name: "privacy unit with nulls", args: args(badFile("unit_nulls.parquet"), pub, "--privacy-unit", "unit"), code: 0},

		// Outputs that cannot be written.
		{name: "output folder missing", args: args(sens, pub), out: filepath.Join(notDir, "missing", "out.arrow"), code: 2, want: []string{"missing"}},
		{name: "output folder is a file", args: args(sens, pub), out: filepath.Join(blocker, "out.arrow"), code: 2, want: []string{"file/out.arrow"}},
		{name: "disk full mid-way on stdout", args: args(sens, pub), out: "-", stdout: &failAfter{n: 600}, code: 1, want: []string{"-o -", "no space left"}},
		{name: "disk full at once on stdout", args: args(sens, pub), out: "-", stdout: &failAfter{n: 0}, code: 1, want: []string{"-o -", "no space left"}},

		// Absurd flags.
		{name: "k = 0", args: with(args(sens, pub), "--teachers", "0"), code: 2, want: []string{"--teachers"}},
		{name: "k > rows", args: with(args(sens, pub), "--teachers", "1000"), code: 0},
		{name: "k > privacy units", args: with(args(sens, pub, "--privacy-unit", "unit"), "--teachers", "31"), code: 0},
		{name: "epsilon = 0", args: with(args(sens, pub), "--epsilon", "0"), code: 2, want: []string{"--epsilon"}},
		{name: "epsilon NaN", args: with(args(sens, pub), "--epsilon", "NaN"), code: 2, want: []string{"--epsilon"}},
		{name: "epsilon Inf", args: with(args(sens, pub), "--epsilon", "Inf"), code: 2, want: []string{"--epsilon"}},
		{name: "delta = 1", args: with(args(sens, pub), "--delta", "1"), code: 2, want: []string{"--delta"}},
		{name: "delta NaN", args: with(args(sens, pub), "--delta", "NaN"), code: 2, want: []string{"--delta"}},
		{name: "negative sigma", args: args(sens, pub, "--mechanism", "gnmax", "--sigma", "-3"), code: 2, want: []string{"--sigma"}},
		{name: "sigma not a number", args: args(sens, pub, "--mechanism", "gnmax", "--sigma", "lots"), code: 2, want: []string{"--sigma"}},
		{name: "sigma Inf", args: without(args(sens, pub, "--mechanism", "gnmax", "--sigma", "Inf"), "--epsilon"), code: 2, want: []string{"--sigma"}},
		{name: "negative laplace scale", args: args(sens, pub, "--mechanism", "lnmax", "--laplace-scale", "-1"), code: 2, want: []string{"--laplace-scale"}},
		{name: "batch size 0", args: with(args(sens, pub), "--batch-size", "0"), code: 2, want: []string{"--batch-size"}},
		{name: "negative max queries", args: args(sens, pub, "--max-queries", "-5"), code: 2, want: []string{"--max-queries"}},
		{name: "answered fraction above 1", args: args(sens, pub, "--answered-fraction", "2"), code: 2, want: []string{"--answered-fraction"}},
		{name: "seed not a number", args: with(args(sens, pub), "--seed", "abc"), code: 2, want: []string{"--seed"}},
		{name: "teachers not a number", args: with(args(sens, pub), "--teachers", "many"), code: 2, want: []string{"teachers"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Each case has its own privacy ledger (never the user's).
			ledger := t.TempDir()
			t.Setenv("PATE_LEDGER", ledger)
			outDir := t.TempDir()
			out := tc.out
			if out == "" {
				out = filepath.Join(outDir, "out.arrow")
			}
			a := append([]string{"pate", tc.args[0], "-o", out}, tc.args[1:]...)
			var stdout io.Writer = new(bytes.Buffer)
			if tc.stdout != nil {
				stdout = tc.stdout
			}
			var stderr bytes.Buffer
			code := runNoPanic(t, a, strings.NewReader(tc.stdin), stdout, &stderr)
			msg := strings.TrimSpace(stderr.String())
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, msg)
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") {
				t.Errorf("message looks like a panic: %q", msg)
			}
			if tc.code == 0 {
				if _, err := os.Stat(out); err != nil {
					t.Errorf("a successful run left no output: %v", err)
				}
				return
			}
			if b, ok := stdout.(*bytes.Buffer); ok && b.Len() > 0 {
				t.Errorf("a failed run wrote %d bytes on stdout: %.80q", b.Len(), b.String())
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message is not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not name %s", msg, w)
				}
			}
			entries, _ := os.ReadDir(outDir)
			for _, e := range entries {
				t.Errorf("left %s behind", e.Name())
			}
			// A run refused for its input releases nothing, but once its
			// write-ahead entry is written it has read the sensitive data,
			// and its failure may depend on them (k units against k−1):
			// the entry stays charged its maximum, never closed below it.
			if tc.code == exitUsage {
				checkFailedRunsCharged(t, ledger)
				if tc.discovery && !(ledgerCharge(t, ledger) > 0) {
					t.Errorf("the ledger charges nothing for a run refused by its private class discovery")
				}
			}
			if tc.out != "" && tc.out != "-" {
				if _, err := os.Stat(tc.out); err == nil {
					t.Errorf("left %s behind", tc.out)
				}
			}
		})
	}
	// The corpus itself is read-only input: no run may leave a temporary
	// file beside it.
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

// checkFailedRunsCharged: every run of the ledger in dir that failed is
// either closed at zero (it never ran: its output could not be created)
// or, without an end entry, charged its maximum.
func checkFailedRunsCharged(t *testing.T, dir string) {
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
func ledgerCharge(t *testing.T, dir string) float64 {
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
