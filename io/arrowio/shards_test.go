package arrowio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/klauspost/compress/gzip"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// writeShard writes recs to path in format (gzip-compressed CSV for
// FormatCSV when gz).
func writeShard(t *testing.T, path string, format Format, s *arrow.Schema, recs []arrow.Record, gz bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b []byte
	switch format {
	case FormatParquet:
		if err := WriteParquet(path, s, recs, ParquetOptions{RowGroupRows: 100}); err != nil {
			t.Fatal(err)
		}
		return
	case FormatIPCFile:
		b = encodeIPC(t, s, recs, true)
	case FormatIPCStream:
		b = encodeIPC(t, s, recs, false)
	case FormatCSV:
		b = encodeCSV(t, s, recs)
	}
	if gz {
		b = gzipBytes(t, b)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOpenShards reads a directory of shards, and a pattern, as the one
// input the shards' rows make in path order, with the row count from the
// footers where the shards have them.
func TestOpenShards(t *testing.T) {
	const rows, per = 1000, 300 // 4 shards: 300, 300, 300, 100
	tests := []struct {
		name     string
		format   Format
		ext      string
		gz       bool
		count    bool  // ReadOptions.CountRows
		wantRows int64 // NumRows
	}{
		{"parquet", FormatParquet, ".parquet", false, false, rows},
		{"ipc file", FormatIPCFile, ".arrow", false, false, rows},
		{"ipc stream", FormatIPCStream, ".arrows", false, false, -1},
		{"csv", FormatCSV, ".csv", false, false, -1},
		{"csv counted", FormatCSV, ".csv", false, true, rows},
		{"gzip csv counted", FormatCSV, ".csv.gz", true, true, rows},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			dir := t.TempDir()
			want := pqtest.FixtureRecords(mem, rows, per)
			defer pqtest.ReleaseAll(want)
			for i, rec := range want {
				// Names sort in row order; a hidden file and a marker are
				// not shards.
				writeShard(t, filepath.Join(dir, "part-"+itoa(i)+tc.ext), tc.format, pqtest.FixtureSchema(), []arrow.Record{rec}, tc.gz)
			}
			for _, junk := range []string{"_SUCCESS", ".part-0.crc"} {
				if err := os.WriteFile(filepath.Join(dir, junk), []byte{0, 1, 2}, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, path := range []string{dir, filepath.Join(dir, "part-*"+tc.ext)} {
				opts := ReadOptions{Allocator: mem, BatchSize: 128, CountRows: tc.count}
				r, err := Open(path, opts)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				if got := r.NumRows(); got != tc.wantRows {
					t.Errorf("%s: NumRows = %d, want %d", path, got, tc.wantRows)
				}
				if r.Format() != tc.format {
					t.Errorf("%s: Format = %v, want %v", path, r.Format(), tc.format)
				}
				r.Close()
				s, got, _ := readAll(t, path, opts)
				pqtest.SameRows(t, s, got, want)
				pqtest.ReleaseAll(got)
			}
		})
	}
}

// TestOpenShardsProjection projects shards onto some columns, in an order
// of their own, with a partition key among them.
func TestOpenShardsProjection(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	recs := pqtest.FixtureRecords(mem, 200, 100)
	defer pqtest.ReleaseAll(recs)
	writeShard(t, filepath.Join(dir, "k=a", "0.parquet"), FormatParquet, pqtest.FixtureSchema(), recs[:1], false)
	writeShard(t, filepath.Join(dir, "k=b", "0.parquet"), FormatParquet, pqtest.FixtureSchema(), recs[1:], false)
	s, got, _ := readAll(t, dir, ReadOptions{Allocator: mem, Columns: []string{"k", "x", "id"}})
	defer pqtest.ReleaseAll(got)
	if names := fieldNames(s, 5); names != `["k" "x" "id"]` {
		t.Fatalf("columns %s", names)
	}
	var ks []string
	for _, rec := range got {
		k := rec.Column(0).(*array.String)
		for i := 0; i < k.Len(); i++ {
			ks = append(ks, k.Value(i))
		}
	}
	if len(ks) != 200 || ks[0] != "a" || ks[99] != "a" || ks[100] != "b" || ks[199] != "b" {
		t.Errorf("partition key column: %d values, first %q", len(ks), ks[:1])
	}
}

// TestOpenHive reads a hive-partitioned directory: its key=value folders
// become string columns (null for Hive's default partition, escapes
// undone), after the files' columns.
func TestOpenHive(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	recs := pqtest.FixtureRecords(mem, 30, 10)
	defer pqtest.ReleaseAll(recs)
	folders := []string{"year=2023/site=a%2Fb", "year=2024/site=__HIVE_DEFAULT_PARTITION__", "year=2024/site=c"}
	for i, f := range folders {
		writeShard(t, filepath.Join(dir, filepath.FromSlash(f), "data.csv"), FormatCSV, pqtest.FixtureSchema(), recs[i:i+1], false)
	}
	s, got, _ := readAll(t, dir, ReadOptions{Allocator: mem})
	defer pqtest.ReleaseAll(got)
	if names := fieldNames(s, 9); names != `["id" "x" "name" "flag" "year" "site"]` {
		t.Fatalf("columns %s", names)
	}
	want := [][2]string{{"2023", "a/b"}, {"2024", "(null)"}, {"2024", "c"}}
	for i, rec := range got {
		if rec.NumRows() != 10 {
			t.Fatalf("batch %d has %d rows, want a shard's 10", i, rec.NumRows())
		}
		year, site := rec.Column(4).(*array.String), rec.Column(5).(*array.String)
		for j := 0; j < year.Len(); j++ {
			if g := [2]string{year.ValueStr(j), site.ValueStr(j)}; g != want[i] {
				t.Fatalf("batch %d row %d: keys %q, want %q", i, j, g, want[i])
			}
		}
	}
}

// TestOpenShardsErrors: what a bad set of shards is told, naming the shard
// and the column, never a value.
func TestOpenShardsErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs := pqtest.FixtureRecords(mem, 20, 10)
	defer pqtest.ReleaseAll(recs)
	_, other := pqtest.ProjectRecords(recs, []string{"id", "name", "x"})
	defer pqtest.ReleaseAll(other)
	renamed := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "y", Type: arrow.PrimitiveTypes.Float64},
		{Name: "name", Type: arrow.BinaryTypes.String}, {Name: "flag", Type: arrow.FixedWidthTypes.Boolean}}, nil)
	renamedRec := array.NewRecord(renamed, recs[1].Columns(), 10)
	defer renamedRec.Release()
	retyped := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil)
	sb := array.NewRecordBuilder(mem, retyped)
	sb.Field(0).(*array.StringBuilder).Append("secret-value")
	strRec := sb.NewRecord()
	sb.Release()
	defer strRec.Release()
	_, idOnly := pqtest.ProjectRecords(recs, []string{"id"})
	defer pqtest.ReleaseAll(idOnly)
	type shard struct {
		path   string
		format Format
		s      *arrow.Schema
		rec    arrow.Record
	}
	tests := []struct {
		name    string
		shards  []shard
		pattern string   // "" reads the directory
		want    []string // in the error
		is      error
	}{
		{"fewer columns", []shard{{"a.parquet", FormatParquet, pqtest.FixtureSchema(), recs[0]}, {"b.parquet", FormatParquet, other[0].Schema(), other[1]}},
			"", []string{"b.parquet", "3 columns", "a.parquet"}, ErrFormat},
		{"another column", []shard{{"a.arrow", FormatIPCFile, pqtest.FixtureSchema(), recs[0]}, {"b.arrow", FormatIPCFile, renamed, renamedRec}},
			"", []string{"b.arrow", `"x"`}, ErrFormat},
		{"another type", []shard{{"a.parquet", FormatParquet, idOnly[0].Schema(), idOnly[0]}, {"b.parquet", FormatParquet, retyped, strRec}},
			"", []string{"b.parquet", `"id"`, "utf8", "int64"}, ErrFormat},
		{"another type in a csv shard", []shard{{"a.csv", FormatCSV, idOnly[0].Schema(), idOnly[0]}, {"b.csv", FormatCSV, retyped, strRec}},
			"", []string{"b.csv", `"id"`}, ErrFormat},
		{"key and column", []shard{{"id=1/a.parquet", FormatParquet, pqtest.FixtureSchema(), recs[0]}},
			"", []string{`"id"`, "partition key"}, ErrFormat},
		{"keys differ", []shard{{"k=1/a.parquet", FormatParquet, pqtest.FixtureSchema(), recs[0]}, {"j=1/b.parquet", FormatParquet, pqtest.FixtureSchema(), recs[1]}},
			"", []string{"partition keys", `"j"`, `"k"`}, ErrFormat},
		{"empty directory", nil, "", []string{"no data file"}, ErrFormat},
		{"pattern without a match", []shard{{"a.parquet", FormatParquet, pqtest.FixtureSchema(), recs[0]}},
			"*.csv", []string{"matches no data file"}, os.ErrNotExist},
		// A file named for no format is skipped (TestListFilesSkipsOtherFormats);
		// one named for a data format, or for none, is read and refused.
		{"not data", []shard{{"a.parquet", FormatParquet, pqtest.FixtureSchema(), recs[0]}, {"b.parquet", 0, nil, nil}},
			"", []string{"b.parquet"}, ErrFormat},
		{"not data, no extension", []shard{{"a.parquet", FormatParquet, pqtest.FixtureSchema(), recs[0]}, {"part-b", 0, nil, nil}},
			"", []string{"part-b"}, ErrFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, sh := range tc.shards {
				p := filepath.Join(dir, filepath.FromSlash(sh.path))
				if sh.format == 0 {
					if err := os.WriteFile(p, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8}, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				writeShard(t, p, sh.format, sh.s, []arrow.Record{sh.rec}, false)
			}
			path := dir
			if tc.pattern != "" {
				path = filepath.Join(dir, tc.pattern)
			}
			err := readErr(path, ReadOptions{Allocator: mem})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret-value") {
				t.Errorf("error %q quotes a value", err)
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
}

// TestShardsOneAtATime checks that shards are read one after another: a
// shard that breaks after the first was read fails the read there, and the
// first shard's reader is closed by then.
func TestShardsOneAtATime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	recs := pqtest.FixtureRecords(mem, 20, 10)
	defer pqtest.ReleaseAll(recs)
	writeShard(t, filepath.Join(dir, "a.arrows"), FormatIPCStream, pqtest.FixtureSchema(), recs[:1], false)
	writeShard(t, filepath.Join(dir, "b.arrows"), FormatIPCStream, pqtest.FixtureSchema(), recs[1:], false)
	r, err := Open(dir, ReadOptions{Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	// The second shard goes away after Open: its error comes at its turn.
	if err := os.Remove(filepath.Join(dir, "b.arrows")); err != nil {
		t.Fatal(err)
	}
	src := r.src.(*shardSource)
	if _, err := r.Read(); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "b.arrows") {
		t.Fatalf("read of the removed shard: %v", err)
	}
	if src.i != 1 || src.cur != nil {
		t.Errorf("after the first shard: shard index %d, a reader still open: %v", src.i, src.cur != nil)
	}
}

// TestListShards: what a path names.
func TestListShards(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b/y=2/1.csv", "b/y=1/2.csv", "b/y=1/1.csv", "b/_tmp/x.csv", "b/.hidden/x.csv", "a.csv", "c.csv.gz",
		"d/y=1/m=2/1.parquet", "d/y=1/m=3/1.parquet", "d/y=1/m=3/_SUCCESS", "d/y=2/m=1/2.parquet", "d/y=2/m=1/x.crc"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("a\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path string
		want []string // relative paths, with their keys after a space
	}{
		{"a.csv", []string{"a.csv"}},
		{"b", []string{"b/y=1/1.csv y=1", "b/y=1/2.csv y=1", "b/y=2/1.csv y=2"}},
		{"*.csv*", []string{"a.csv", "c.csv.gz"}},
		{"b/y=*/1.csv", []string{"b/y=1/1.csv y=1", "b/y=2/1.csv y=2"}},
		{"b/y=[2]", []string{"b/y=2/1.csv y=2"}},
		// "**": any number of folders, none included.
		{"d/**/*.parquet", []string{"d/y=1/m=2/1.parquet y=1 m=2", "d/y=1/m=3/1.parquet y=1 m=3", "d/y=2/m=1/2.parquet y=2 m=1"}},
		{"**/1.csv", []string{"b/y=1/1.csv y=1", "b/y=2/1.csv y=2"}},
		{"d/**/m=3/*", []string{"d/y=1/m=3/1.parquet y=1 m=3"}},
		{"b/**/y=2/1.csv", []string{"b/y=2/1.csv y=2"}},
		{"d/y=2/**", []string{"d/y=2/m=1/2.parquet m=1", "d/y=2/m=1/x.crc m=1"}}, // keys below the fixed part
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			shards, err := ListShards(filepath.Join(dir, filepath.FromSlash(tc.path)))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range shards {
				rel, _ := filepath.Rel(dir, s.Path)
				g := filepath.ToSlash(rel)
				for _, k := range s.Keys {
					g += " " + k.Name + "=" + k.Value
				}
				got = append(got, g)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestListFilesSkipsOtherFormats: inside a directory, a file is a shard
// when its name ends in a data format's extension or has none, or when
// its first bytes are a data format's magic; any other (a README.md beside
// the data) is skipped and named, in a directory given or matched by a
// pattern. A file a pattern matches itself is read whatever its name.
func TestListFilesSkipsOtherFormats(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"s/a.parquet": "PAR1....", "s/b.csv": "x\n1\n", "s/c.csv.gz": "\x1f\x8b\x08", "s/d.arrows": "\xff\xff\xff\xff\x10\x00\x00\x00",
		"s/part-00000": "x\n1\n", "s/e.bin": "ARROW1\x00\x00", "s/README.md": "# data\n", "s/notes.txt": "x\n1\n",
		"s/sub/schema.json": "{}", "s/_SUCCESS": "", "only/README.md": "# nothing here\n",
	}
	for f, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel := func(p string) string { r, _ := filepath.Rel(dir, p); return filepath.ToSlash(r) }
	tests := []struct {
		path          string
		shards, skips []string
	}{
		{"s", []string{"s/a.parquet", "s/b.csv", "s/c.csv.gz", "s/d.arrows", "s/e.bin", "s/part-00000"},
			[]string{"s/README.md", "s/notes.txt", "s/sub/schema.json"}},
		{"[s]", []string{"s/a.parquet", "s/b.csv", "s/c.csv.gz", "s/d.arrows", "s/e.bin", "s/part-00000"},
			[]string{"s/README.md", "s/notes.txt", "s/sub/schema.json"}},
		{"s/*.txt", []string{"s/notes.txt"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			shards, skipped, err := ListFiles(filepath.Join(dir, tc.path))
			if err != nil {
				t.Fatal(err)
			}
			var got, gotSkips []string
			for _, s := range shards {
				got = append(got, rel(s.Path))
			}
			for _, p := range skipped {
				gotSkips = append(gotSkips, rel(p))
			}
			if !slices.Equal(got, tc.shards) || !slices.Equal(gotSkips, tc.skips) {
				t.Errorf("shards %q, skipped %q; want %q, %q", got, gotSkips, tc.shards, tc.skips)
			}
		})
	}
	// A directory of nothing readable says what it skipped.
	_, _, err := ListFiles(filepath.Join(dir, "only"))
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "README.md") {
		t.Errorf("a directory of a README alone: %v, want ErrFormat naming README.md", err)
	}
}

// TestReadGzip reads gzip-compressed inputs, told by their magic bytes
// whatever their names, from a file and from standard input.
func TestReadGzip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	paths := writeFixtures(t, dir, 500, 200)
	want := pqtest.FixtureRecords(mem, 500, 200)
	defer pqtest.ReleaseAll(want)
	tests := []struct {
		name    string
		src     string // fixture compressed
		as      string // file name of the compressed copy
		stdin   bool
		opts    ReadOptions
		format  Format
		rows    int64
		wantErr string
	}{
		{"csv.gz", paths[FormatCSV], "in.csv.gz", false, ReadOptions{}, FormatCSV, -1, ""},
		{"no extension", paths[FormatCSV], "in", false, ReadOptions{}, FormatCSV, -1, ""},
		{"counted", paths[FormatCSV], "in.csv", false, ReadOptions{CountRows: true}, FormatCSV, 500, ""},
		{"stdin", paths[FormatCSV], "-", true, ReadOptions{}, FormatCSV, -1, ""},
		{"ipc stream", paths[FormatIPCStream], "in.arrows.gz", false, ReadOptions{}, FormatIPCStream, -1, ""},
		{"parquet", paths[FormatParquet], "in.parquet.gz", false, ReadOptions{}, 0, 0, "decompress it first"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain, err := os.ReadFile(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			gz := gzipBytes(t, plain)
			path := tc.as
			opts := tc.opts
			opts.Allocator = mem
			if tc.stdin {
				opts.Stdin = bytes.NewReader(gz)
			} else {
				path = filepath.Join(dir, tc.as)
				if err := os.WriteFile(path, gz, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.wantErr != "" {
				err := readErr(path, opts)
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrFormat) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if !tc.stdin {
				r, err := Open(path, opts)
				if err != nil {
					t.Fatal(err)
				}
				if r.NumRows() != tc.rows {
					t.Errorf("NumRows = %d, want %d", r.NumRows(), tc.rows)
				}
				r.Close()
			}
			s, got, format := readAll(t, path, opts)
			defer pqtest.ReleaseAll(got)
			if format != tc.format {
				t.Errorf("format %v, want %v", format, tc.format)
			}
			pqtest.SameRows(t, s, got, want)
		})
	}
}

// TestCountRows: ReadOptions.CountRows counts a CSV file's records as the
// reader reads them, and never a CSV read with declared types (sensitive
// data) or standard input.
func TestCountRows(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		opts  ReadOptions
		stdin bool
		want  int64
	}{
		{"plain", "a,b\n1,2\n3,4\n", ReadOptions{CountRows: true}, false, 2},
		{"no final newline, blank lines", "a,b\n1,2\n\n3,4", ReadOptions{CountRows: true}, false, 2},
		{"quoted newline", "a,b\n\"x\ny\",2\n3,4\n", ReadOptions{CountRows: true}, false, 2},
		{"header only", "a,b\n", ReadOptions{CountRows: true}, false, 0},
		{"not asked", "a,b\n1,2\n", ReadOptions{}, false, -1},
		{"declared types", "a,b\n1,2\n", ReadOptions{CountRows: true, CSVTypes: map[string]arrow.DataType{}}, false, -1},
		{"stdin", "a,b\n1,2\n", ReadOptions{CountRows: true}, true, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(t.TempDir(), "in.csv")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := tc.opts
			opts.Allocator = mem
			if tc.stdin {
				path, opts.Stdin = "-", strings.NewReader(tc.text)
			}
			r, err := Open(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.NumRows(); got != tc.want {
				t.Errorf("NumRows = %d, want %d", got, tc.want)
			}
			var n int64
			for {
				rec, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n += rec.NumRows()
				rec.Release()
			}
			if tc.want >= 0 && n != tc.want {
				t.Errorf("read %d rows, counted %d", n, tc.want)
			}
		})
	}
}

// FuzzReadGzipCSV reads arbitrary bytes behind a gzip header and as a
// gzip member: no panic, no leak, and a gzip file that decodes reads as its
// decompressed bytes do.
func FuzzReadGzipCSV(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n3,x\n"), false)
	f.Add([]byte("a\n\"1\n"), false)
	f.Add(gzipBytes(f, []byte("a,b\n1,2\n")), true)
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0xff, 0xff}, true)
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		dir := t.TempDir()
		gz := data
		if !raw {
			gz = gzipBytes(t, data)
		} else if !isGzip(gz) {
			gz = append([]byte{0x1f, 0x8b}, gz...)
		}
		path := filepath.Join(dir, "in.gz")
		if err := os.WriteFile(path, gz, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []ReadOptions{
			{Allocator: mem, BatchSize: 3, CountRows: true},
			{Allocator: mem, BatchSize: 3, CSVTypes: map[string]arrow.DataType{"a": arrow.PrimitiveTypes.Int64}},
		} {
			_, recs, err := readAllErr(path, opts)
			pqtest.ReleaseAll(recs)
			if err != nil && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrNoColumn) {
				t.Fatalf("error that is not ErrFormat: %v", err)
			}
		}
		if raw || isGzip(data) {
			return
		}
		if f, err := SniffFormat(data[:min(len(data), sniffLen)], "in"); err != nil || f != FormatCSV {
			return
		}
		// The compressed copy reads as the plain bytes do.
		plain := filepath.Join(dir, "in.txt")
		if err := os.WriteFile(plain, data, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := ReadOptions{Allocator: mem, BatchSize: 3}
		ps, precs, perr := readAllErr(plain, opts)
		defer pqtest.ReleaseAll(precs)
		gs, grecs, gerr := readAllErr(path, opts)
		defer pqtest.ReleaseAll(grecs)
		if (perr == nil) != (gerr == nil) {
			t.Fatalf("plain: %v, gzip: %v", perr, gerr)
		}
		if perr == nil && ps.Equal(gs) {
			pqtest.SameRows(t, ps, grecs, precs)
		}
	})
}

// TestReadWriterDirectories reads directories other tools write: DuckDB's
// PARTITION_BY (a hive layout, the key only in the folder names) and
// Polars shards, and their LZ4 files (testdata/writers, shards.mjs).
func TestReadWriterDirectories(t *testing.T) {
	tests := []struct {
		dir  string
		cols string
		key  bool // column k from the folders
	}{
		{"duckdb_hive", `["x0" "id" "s" "k"]`, true},
		{"polars_shards", `["x0" "id" "s"]`, false},
		// One file each, of LZ4_RAW pages (parquet_lz4.go).
		{"duckdb_lz4.parquet", `["x0" "id" "s"]`, false},
		{"polars_lz4.parquet", `["x0" "id" "s"]`, false},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join("testdata", "writers", tc.dir)
			r, err := Open(path, ReadOptions{Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			if r.NumRows() != 300 {
				t.Errorf("NumRows = %d, want 300 from the footers", r.NumRows())
			}
			r.Close()
			s, recs, _ := readAll(t, path, ReadOptions{Allocator: mem, BatchSize: 64})
			defer pqtest.ReleaseAll(recs)
			if got := fieldNames(s, 9); got != tc.cols {
				t.Fatalf("columns %s, want %s", got, tc.cols)
			}
			seen := make([]bool, 300)
			for _, rec := range recs {
				x0 := rec.Column(0).(*array.Float64)
				id := rec.Column(1).(*array.Int64)
				str := rec.Column(2).(*array.String)
				for j := 0; j < int(rec.NumRows()); j++ {
					i := id.Value(j)
					if i < 0 || i >= 300 || seen[i] {
						t.Fatalf("id %d out of range or twice", i)
					}
					seen[i] = true
					if x0.Value(j) != float64(i)*0.5 || str.Value(j) != "v"+itoa(int(i%4)) {
						t.Fatalf("row id %d: x0 %v, s %q", i, x0.Value(j), str.Value(j))
					}
					if tc.key {
						if k := rec.Column(3).(*array.String).Value(j); k != itoa(int(i%3)) {
							t.Fatalf("row id %d: k %q, want %d", i, k, i%3)
						}
					}
				}
			}
			for i, ok := range seen {
				if !ok {
					t.Fatalf("row id %d missing", i)
				}
			}
		})
	}
}
