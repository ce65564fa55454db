package arrowio

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

func metaSchema(kv ...string) *arrow.Schema {
	var keys, vals []string
	for i := 0; i < len(kv); i += 2 {
		keys, vals = append(keys, kv[i]), append(vals, kv[i+1])
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(pqtest.FixtureSchema().Fields(), &md)
}

// writeAll creates path, writes recs and commits with final.
func writeAll(t *testing.T, path string, s *arrow.Schema, recs []arrow.Record, opts WriteOptions, final map[string]string) error {
	t.Helper()
	w, err := Create(path, s, opts)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Commit(final)
}

func TestWriteRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		format  WriteFormat
		zstd    bool
		rows    int
		reserve map[string]int
		final   map[string]string
	}{
		{"file", WriteFile, false, 3000, nil, nil},
		{"file zstd", WriteFile, true, 3000, nil, nil},
		{"stream", WriteStream, false, 3000, nil, nil},
		{"stream zstd", WriteStream, true, 1000, nil, nil},
		{"file no rows", WriteFile, false, 0, nil, nil},
		{"file reserved", WriteFile, true, 2000, map[string]int{"pate.report": 4096, "pate.extra": 64},
			map[string]string{"pate.report": `{"epsilon":1.5,"labels":2000}`, "pate.extra": "x"}},
		{"stream reserved", WriteStream, false, 2000, map[string]int{"pate.report": 300},
			map[string]string{"pate.report": `{"epsilon":0.5}`}},
		{"file reserved exact fit", WriteFile, false, 10, map[string]int{"pate.report": 40},
			map[string]string{"pate.report": strings.Repeat("a", 40)}},
		{"file reserved not given", WriteFile, false, 10, map[string]int{"pate.report": 100}, nil},
		{"parquet", WriteParquetFile, false, 3000, nil, nil},
		{"parquet zstd", WriteParquetFile, true, 3000, nil, nil},
		{"parquet no rows", WriteParquetFile, false, 0, nil, nil},
		{"parquet more rows than a row group", WriteParquetFile, false, parquetRowGroup + 1000, nil, nil},
		{"parquet reserved", WriteParquetFile, true, 2000, map[string]int{"pate.report": 4096, "pate.extra": 64},
			map[string]string{"pate.report": `{"epsilon":1.5,"labels":2000}`, "pate.extra": "x"}},
		{"parquet reserved not given", WriteParquetFile, false, 10, map[string]int{"pate.report": 100}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			recs := pqtest.FixtureRecords(mem, tc.rows, 700)
			defer pqtest.ReleaseAll(recs)
			s := metaSchema("pate.version", "0.1.0", "pate.report", "initial")
			path := filepath.Join(t.TempDir(), "out.arrow")
			if tc.format == WriteParquetFile {
				path = filepath.Join(filepath.Dir(path), "out.parquet")
			}
			if err := writeAll(t, path, s, recs, WriteOptions{Format: tc.format, Zstd: tc.zstd, Allocator: mem, Reserve: tc.reserve}, tc.final); err != nil {
				t.Fatal(err)
			}
			got, back, f := readAll(t, path, ReadOptions{Allocator: mem, BatchSize: 512})
			defer pqtest.ReleaseAll(back)
			wantFormat := FormatIPCFile
			switch tc.format {
			case WriteStream:
				wantFormat = FormatIPCStream
			case WriteParquetFile:
				wantFormat = FormatParquet
			}
			if f != wantFormat {
				t.Errorf("format %v, want %v", f, wantFormat)
			}
			if !got.Equal(pqtest.FixtureSchema()) {
				t.Errorf("schema %v, want %v", got, pqtest.FixtureSchema())
			}
			if tc.rows > 0 {
				pqtest.SameRows(t, got, back, recs)
			} else if len(back) != 0 {
				t.Errorf("%d batches from an empty output", len(back))
			}
			md := got.Metadata()
			if v, _ := md.GetValue("pate.version"); v != "0.1.0" {
				t.Errorf("pate.version = %q", v)
			}
			for k := range tc.reserve {
				v, _ := md.GetValue(k)
				want, ok := tc.final[k]
				if !ok {
					want = `{"pate_reserved":"` + k + `"}`
				}
				// Patched in place, the value reads back exact: no padding.
				if v != want {
					t.Errorf("%s = %.60q, want %q", k, v, want)
				}
				if strings.HasPrefix(want, "{") && !json.Valid([]byte(v)) {
					t.Errorf("%s is not valid JSON after patching", k)
				}
			}
			if tc.reserve == nil {
				if v, _ := md.GetValue("pate.report"); v != "initial" {
					t.Errorf("unreserved pate.report = %q, want initial", v)
				}
			}
			if left := tempFiles(t, filepath.Dir(path)); len(left) != 0 {
				t.Errorf("temp files left: %v", left)
			}
		})
	}
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteStdout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	recs := pqtest.FixtureRecords(mem, 1200, 500)
	defer pqtest.ReleaseAll(recs)
	var buf bytes.Buffer
	s := metaSchema("pate.report", `{"partial":true}`)
	// WriteFile is overridden: stdout is always a stream.
	opts := WriteOptions{Format: WriteFile, Allocator: mem, Stdout: &buf, Reserve: map[string]int{"pate.report": 40, "pate.other": 30}}
	w, err := Create("-", s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if w.Patchable() {
		t.Error("stdout writer claims to be patchable")
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(map[string]string{"pate.report": `{"final":true}`}); err != nil {
		t.Fatal(err)
	}
	got, back, f := readAll(t, "-", ReadOptions{Allocator: mem, Stdin: &buf})
	defer pqtest.ReleaseAll(back)
	if f != FormatIPCStream {
		t.Errorf("format %v, want stream", f)
	}
	pqtest.SameRows(t, got, back, recs)
	md := got.Metadata()
	// Nothing is patched on stdout, so nothing is padded.
	if v, _ := md.GetValue("pate.report"); v != `{"partial":true}` {
		t.Errorf("pate.report = %q, want the initial value", v)
	}
	if v, _ := md.GetValue("pate.other"); v != `{"pate_reserved":"pate.other"}` {
		t.Errorf("pate.other = %q, want the placeholder", v)
	}
}

func TestWriteTerminalRefused(t *testing.T) {
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no terminal:", err)
	}
	defer tty.Close()
	if _, err := Create("-", pqtest.FixtureSchema(), WriteOptions{Stdout: tty}); err == nil || !strings.Contains(err.Error(), "terminal") {
		t.Fatalf("Create on a terminal = %v, want a refusal", err)
	}
}

func TestWriteAbortAndErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	recs := pqtest.FixtureRecords(mem, 500, 200)
	defer pqtest.ReleaseAll(recs)
	const previous = "previous contents"

	t.Run("abort without previous", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "o.arrow")
		w, err := Create(path, pqtest.FixtureSchema(), WriteOptions{Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(recs[0]); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("files left after Abort: %v", ents)
		}
		if err := w.Write(recs[0]); err == nil {
			t.Error("Write after Abort succeeded")
		}
	})
	for _, format := range []WriteFormat{WriteFile, WriteStream} {
		t.Run("abort keeps previous/"+format.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "o.arrow")
			if err := os.WriteFile(path, []byte(previous), 0o600); err != nil {
				t.Fatal(err)
			}
			w, err := Create(path, pqtest.FixtureSchema(), WriteOptions{Format: format, Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			w.Abort()
			checkOnly(t, dir, path, previous)
		})
	}
	t.Run("unwritable folder", func(t *testing.T) {
		for _, p := range []string{filepath.Join(t.TempDir(), "missing", "o.arrow"), unwritableDir(t) + "/o.arrow"} {
			if p == "/o.arrow" {
				continue
			}
			_, err := Create(p, pqtest.FixtureSchema(), WriteOptions{Allocator: mem})
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("Create(%s) = %v, want an error naming the path", p, err)
			}
		}
	})
	t.Run("output is a directory", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := Create(dir, pqtest.FixtureSchema(), WriteOptions{}); err == nil {
			t.Error("Create on a directory succeeded")
		}
	})
	t.Run("reserve too small", func(t *testing.T) {
		if _, err := Create(filepath.Join(t.TempDir(), "o"), pqtest.FixtureSchema(), WriteOptions{Reserve: map[string]int{"k": 5}}); err == nil {
			t.Error("a 5-byte reserve was accepted")
		}
	})
	for _, tc := range []struct {
		name  string
		final map[string]string
	}{
		{"final too long", map[string]string{"pate.report": strings.Repeat("x", 65)}},
		{"final not reserved", map[string]string{"pate.other": "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "o.arrow")
			os.WriteFile(path, []byte(previous), 0o600)
			err := writeAll(t, path, pqtest.FixtureSchema(), recs, WriteOptions{Allocator: mem, Reserve: map[string]int{"pate.report": 64}}, tc.final)
			if err == nil {
				t.Fatal("Commit succeeded")
			}
			checkOnly(t, dir, path, previous)
		})
	}
	t.Run("schema mismatch", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "o.arrow")
		other := arrow.NewSchema(pqtest.FixtureSchema().Fields()[:2], nil)
		w, err := Create(path, other, WriteOptions{Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(recs[0]); err == nil {
			t.Fatal("write of a record with other fields succeeded")
		}
		if err := w.Commit(nil); err == nil {
			t.Fatal("commit after a failed write succeeded")
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("files left: %v", ents)
		}
	})
}

// errAfter fails every write once limit bytes have been written.
type errAfter struct {
	w     io.Writer
	limit int
}

var errInjected = errors.New("injected write failure")

func (e *errAfter) Write(p []byte) (int, error) {
	if len(p) > e.limit {
		n, _ := e.w.Write(p[:e.limit])
		e.limit = 0
		return n, errInjected
	}
	e.limit -= len(p)
	return e.w.Write(p)
}

func TestWriteFailsMidway(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	recs := pqtest.FixtureRecords(mem, 60000, 3000) // ~1.5 MB, more than the 1 MiB buffer
	defer pqtest.ReleaseAll(recs)
	for _, limit := range []int{0, 100, 1 << 20} {
		for _, format := range []WriteFormat{WriteFile, WriteStream} {
			t.Run(format.String()+"/"+itoa(limit), func(t *testing.T) {
				wrap := func(w io.Writer) io.Writer { return &errAfter{w: w, limit: limit} }
				dir := t.TempDir()
				path := filepath.Join(dir, "o.arrow")
				err := writeAll(t, path, pqtest.FixtureSchema(), recs, WriteOptions{Format: format, Allocator: mem, Reserve: map[string]int{"r": 64}, wrap: wrap}, map[string]string{"r": "v"})
				if !errors.Is(err, errInjected) {
					t.Fatalf("error %v, want the injected failure", err)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Errorf("files left: %v", ents)
				}
			})
		}
	}
	t.Run("stdout", func(t *testing.T) {
		var buf bytes.Buffer
		w, err := Create("-", pqtest.FixtureSchema(), WriteOptions{Allocator: mem, Stdout: &errAfter{w: &buf, limit: 5000}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err = w.Write(r); err != nil {
				break
			}
		}
		if err == nil {
			err = w.Commit(nil)
		} else {
			w.Abort()
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("error %v, want the injected failure", err)
		}
	})
}

// checkOnly checks that dir holds only path, with contents want.
func checkOnly(t *testing.T, dir, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("previous file = %q, %v; want it untouched", b, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files in folder: %v, want only %s", ents, filepath.Base(path))
	}
}

// unwritableDir returns a read-only folder, or "" when permissions are not
// enforced (running as root).
func unwritableDir(t *testing.T) string {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		return ""
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	return dir
}

func TestWriteFormatFor(t *testing.T) {
	tests := []struct {
		path  string
		want  WriteFormat
		known bool
	}{
		{"out/labeled.parquet", WriteParquetFile, true},
		{"LABELED.PARQUET", WriteParquetFile, true},
		{"x.pq", WriteParquetFile, true},
		{"x.arrows", WriteStream, true},
		{"x.arrow", WriteFile, true},
		{"x.feather", WriteFile, true},
		{"x.out", WriteFile, false},
		{"x.parquet.tmp", WriteFile, false},
		{"-", WriteFile, false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			got, known := WriteFormatFor(tc.path, WriteFile)
			if got != tc.want || known != tc.known {
				t.Fatalf("WriteFormatFor(%q) = %v, %v; want %v, %v", tc.path, got, known, tc.want, tc.known)
			}
		})
	}
}

// TestWriteParquetAbortAndStdout: an aborted Parquet output leaves
// nothing behind, and Parquet is refused on standard output (its footer
// comes last) before anything is written.
func TestWriteParquetAbortAndStdout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	recs := pqtest.FixtureRecords(mem, 100, 30)
	defer pqtest.ReleaseAll(recs)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	w, err := Create(path, pqtest.FixtureSchema(), WriteOptions{Format: WriteParquetFile, Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("aborted parquet output left %v", left)
	}
	var out bytes.Buffer
	if _, err := Create("-", pqtest.FixtureSchema(), WriteOptions{Format: WriteParquetFile, Allocator: mem, Stdout: &out}); err == nil || out.Len() != 0 {
		t.Fatalf("parquet on standard output: err %v, %d bytes written", err, out.Len())
	}
}

// TestReservedMetadataExactInTheFooter: a reserved value patched at Commit
// reads back exact (no padding) both from the footer's schema, which
// readers of the file format read, and from the leading schema message,
// which readers of a stream read; the file stays valid for both.
func TestReservedMetadataExactInTheFooter(t *testing.T) {
	tests := []struct {
		name  string
		final map[string]string
	}{
		{"short value", map[string]string{"pate.mechanism": "dp-logreg", "pate.report": `{"epsilon":1}`}},
		{"exact fit", map[string]string{"pate.mechanism": strings.Repeat("m", 64), "pate.report": `{}`}},
		{"empty value", map[string]string{"pate.mechanism": "", "pate.report": `{"x":"  trailing  "}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			recs := pqtest.FixtureRecords(mem, 1500, 700)
			defer pqtest.ReleaseAll(recs)
			path := filepath.Join(t.TempDir(), "out.arrow")
			opts := WriteOptions{Format: WriteFile, Allocator: mem, Reserve: map[string]int{"pate.mechanism": 64, "pate.report": 256}}
			if err := writeAll(t, path, metaSchema("pate.version", "0.1.0"), recs, opts, tc.final); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fr, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
			if err != nil {
				t.Fatal(err)
			}
			defer fr.Close()
			st, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			sr, err := ipc.NewReader(io.NewSectionReader(f, 8, st.Size()-8), ipc.WithAllocator(mem))
			if err != nil {
				t.Fatal(err)
			}
			defer sr.Release()
			rows := 0
			for sr.Next() {
				rows += int(sr.Record().NumRows())
			}
			if rows != 1500 {
				t.Errorf("the stream inside the file has %d rows, want 1500", rows)
			}
			for k, want := range tc.final {
				footer, _ := fr.Schema().Metadata().GetValue(k)
				leading, _ := sr.Schema().Metadata().GetValue(k)
				if footer != want || leading != want {
					t.Errorf("%s: footer %.70q, leading message %.70q; want %q", k, footer, leading, want)
				}
			}
			if n := fr.NumRecords(); n == 0 {
				t.Errorf("the footer lists no record batch")
			}
		})
	}
}
