package arrowio

import (
	"encoding/binary"
	"errors"
	"github.com/pate-tool/pate/io/arrowio/internal/pqread"
	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestIPCRecycledBuffers reads Arrow IPC files and streams of many
// batches of one size (every column kind of pqtest.PlainSchema: nulls, strings,
// dates; bodies plain and zstd-compressed), releasing each batch before
// reading the next, with the recycler's poisoning on: buffers are reused,
// every value read is right (a reused buffer Arrow did not overwrite
// whole, or one still in use, would show), and nothing leaks.
func TestIPCRecycledBuffers(t *testing.T) {
	tune := pqread.DefaultTuning()
	tune.PoisonRecycled = true
	const rows, batch = 9_100, 700
	ref := pqtest.PlainRecord(memory.NewGoAllocator(), 0, rows)
	defer ref.Release()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		file bool
		opts []ipc.Option
	}{
		{"file", true, nil},
		{"file/zstd", true, []ipc.Option{ipc.WithZstd()}},
		{"stream", false, nil},
		{"stream/lz4", false, []ipc.Option{ipc.WithLZ4()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, filepath.Base(tc.name)+".arrow")
			writeIPCBatches(t, path, ref, batch, tc.file, tc.opts)
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			st := new(pqread.Stats)
			r, err := Open(path, ReadOptions{Allocator: mem, tune: tune, stats: st})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Format(); (got == FormatIPCFile) != tc.file {
				t.Fatalf("read as %v", got)
			}
			at := readReleasing(t, r, pqtest.PlainSchema, ref)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if at != rows {
				t.Fatalf("read %d rows, want %d", at, rows)
			}
			if st.RecycledBuffers.Load() == 0 {
				t.Error("no buffer was recycled")
			}
		})
	}
}

// writeIPCBatches writes rec to path as an Arrow IPC file (or stream) of
// batches of batch rows.
func writeIPCBatches(t *testing.T, path string, rec arrow.Record, batch int64, file bool, opts []ipc.Option) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opts = append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)
	var w interface {
		Write(arrow.Record) error
		Close() error
	}
	if file {
		if w, err = ipc.NewFileWriter(f, opts...); err != nil {
			t.Fatal(err)
		}
	} else {
		w = ipc.NewWriter(f, opts...)
	}
	for off := int64(0); off < rec.NumRows(); off += batch {
		s := rec.NewSlice(off, min(off+batch, rec.NumRows()))
		err := w.Write(s)
		s.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIPCShortVectors reads IPC inputs whose record batch has fewer
// buffers than its schema needs (Arrow v15 would take the bytes after the
// vector for buffers): each is refused with ErrFormat by the layout check,
// not by the allocation limit behind it.
func TestIPCShortVectors(t *testing.T) {
	ref := pqtest.PlainRecord(memory.NewGoAllocator(), 0, 50)
	defer ref.Release()
	dir := t.TempDir()
	shortened := func(t *testing.T, file bool) string {
		path := filepath.Join(dir, map[bool]string{true: "short.arrow", false: "short.arrows"}[file])
		writeIPCBatches(t, path, ref, 50, file, nil)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		shortenBufferVector(t, b, file)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	seed := func(t *testing.T) string {
		src, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzReadIPCFile", "26d2c89c02376960"))
		if err != nil {
			t.Fatal(err)
		}
		_, lit, _ := strings.Cut(string(src), "\n")
		raw, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(lit), "[]byte("), ")"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "seed.arrow")
		if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name string
		path func(*testing.T) string
	}{
		{"file", func(t *testing.T) string { return shortened(t, true) }},
		{"stream", func(t *testing.T) string { return shortened(t, false) }},
		{"fuzz seed 26d2c8 (2⁴⁷ bytes asked for)", seed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			_, recs, err := readAllErr(tc.path(t), ReadOptions{Allocator: mem})
			pqtest.ReleaseAll(recs)
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "its schema needs") {
				t.Errorf("got %v, want ErrFormat from the layout check", err)
			}
		})
	}
}

// shortenBufferVector decrements the length of the buffers vector of the
// first record batch in the IPC stream (or file) b.
func shortenBufferVector(t *testing.T, b []byte, file bool) {
	t.Helper()
	u32 := func(p int) int { return int(binary.LittleEndian.Uint32(b[p:])) }
	// field returns the position of field i of the flatbuffer table at
	// tab, or -1 if it is absent.
	field := func(tab, i int) int {
		vt := tab - int(int32(binary.LittleEndian.Uint32(b[tab:])))
		if 4+2*i >= int(binary.LittleEndian.Uint16(b[vt:])) {
			return -1
		}
		if off := int(binary.LittleEndian.Uint16(b[vt+4+2*i:])); off != 0 {
			return tab + off
		}
		return -1
	}
	ref := func(tab, i int) int {
		p := field(tab, i)
		if p < 0 {
			t.Fatalf("no field %d", i)
		}
		return p + u32(p)
	}
	p := 0
	if file {
		p = 8 // magic and padding
	}
	for p+8 <= len(b) && uint32(u32(p)) == 0xFFFFFFFF {
		n, meta := u32(p+4), p+8
		msg := meta + u32(meta) // Message: header_type 1, header 2, bodyLength 3
		body := 0
		if q := field(msg, 3); q >= 0 {
			body = int(binary.LittleEndian.Uint64(b[q:]))
		}
		if q := field(msg, 1); q >= 0 && b[q] == 3 { // RecordBatch: buffers 2
			vec := ref(ref(msg, 2), 2)
			binary.LittleEndian.PutUint32(b[vec:], uint32(u32(vec)-1))
			return
		}
		p = meta + n + body
	}
	t.Fatal("no record batch")
}
