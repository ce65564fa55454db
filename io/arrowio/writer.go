package arrowio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/term"

	"github.com/pate-tool/pate/io/atomicfile"
)

// WriteFormat is an output format.
type WriteFormat int

// Output formats.
const (
	WriteFile        WriteFormat = iota // Arrow IPC file (random access, has a footer)
	WriteStream                         // Arrow IPC stream
	WriteParquetFile                    // Parquet (snappy, or zstd with WriteOptions.Zstd)
)

// WriteFormatFor returns the output format a path's extension names:
// Parquet for .parquet and .pq, an Arrow IPC stream for .arrows, and
// def for any other name. ok is false for a name whose extension
// names none of them.
func WriteFormatFor(path string, def WriteFormat) (f WriteFormat, ok bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return WriteParquetFile, true
	case ".arrows":
		return WriteStream, true
	case ".arrow", ".feather", ".ipc":
		return WriteFile, true
	}
	return def, false
}

// String returns a short lower-case name of the format.
func (f WriteFormat) String() string {
	switch f {
	case WriteFile:
		return "arrow ipc file"
	case WriteStream:
		return "arrow ipc stream"
	case WriteParquetFile:
		return "parquet"
	}
	return fmt.Sprintf("writeformat(%d)", int(f))
}

// WriteOptions configures Create.
type WriteOptions struct {
	// Format is the output format; the path "-" always writes WriteStream.
	Format WriteFormat
	// Zstd compresses every buffer with zstd (readable by Arrow >= 1.0;
	// apache-arrow JS has no codec for compressed IPC bodies). Parquet
	// output is snappy without it, zstd with it.
	Zstd bool
	// Allocator is used by the IPC writer; nil means memory.DefaultAllocator.
	Allocator memory.Allocator
	// Stdout is written when the path is "-"; nil means os.Stdout. Binary
	// output is refused when it is an *os.File that is a terminal.
	Stdout io.Writer
	// Reserve maps schema-metadata keys whose value is only known at the
	// end of the run to the number of bytes reserved for it. Create writes
	// a placeholder of exactly that many bytes ({"pate_reserved":"<key>"}
	// padded with spaces) and Commit overwrites it in place with the final
	// value, then shortens the string's length prefix in the flatbuffer to
	// the value's length (the reservation's bytes past it stay in the file,
	// unread), in the leading schema message and in the footer's schema
	// of a file: readers of either format see the value exactly, without
	// padding. A final value longer than its reservation is an error.
	//
	// On standard output nothing can be patched: the schema is already
	// sent. A reserved key then keeps the value the caller gave in the
	// schema metadata passed to Create (unpadded), or the placeholder when
	// there was none, and the final values given to Commit are ignored;
	// see Writer.Patchable.
	Reserve map[string]int

	// wrap, when set (by tests), wraps the output to inject write
	// failures.
	wrap func(io.Writer) io.Writer
}

// Writer writes record batches to an Arrow IPC file or stream atomically:
// file output goes to a temporary file in the target's folder that Commit
// renames into place. It is not safe for concurrent use.
type Writer struct {
	path    string // target path, "-" for stdout
	format  WriteFormat
	schema  *arrow.Schema
	reserve map[string]int
	holders map[string]string // reserved key → the padded placeholder written
	initial map[string]string // reserved key → the placeholder before padding

	tmp *atomicfile.File
	out *posWriter
	fw  *ipc.FileWriter
	sw  *ipc.Writer
	pw  *parquetOut

	rows  int64
	done  bool
	err   error // sticky write error
	close func() error
}

// posWriter buffers writes and answers Seek(0, io.SeekCurrent), which is
// all ipc.FileWriter needs.
type posWriter struct {
	w   *bufio.Writer
	pos int64
}

func (p *posWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.pos += int64(n)
	return n, err
}

func (p *posWriter) Seek(off int64, whence int) (int64, error) {
	if off != 0 || whence != io.SeekCurrent {
		return 0, errors.New("output is not seekable")
	}
	return p.pos, nil
}

// Create starts writing record batches with the given schema to path ("-"
// for standard output). The schema's metadata (with placeholders for the
// reserved keys) is written as the file's schema metadata; records given to
// Write need not carry it. A missing or unwritable output folder is an
// error here, before any work is done. The caller must end with Commit or
// Abort.
func Create(path string, schema *arrow.Schema, opts WriteOptions) (*Writer, error) {
	if opts.Format != WriteFile && opts.Format != WriteStream && opts.Format != WriteParquetFile {
		return nil, fmt.Errorf("%s: unknown output format %d", path, opts.Format)
	}
	if opts.Format == WriteParquetFile && path == "-" {
		return nil, errors.New("parquet output needs a file (its footer is written last): write an Arrow IPC stream to standard output, or name a file")
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	w := &Writer{path: path, format: opts.Format, reserve: opts.Reserve, holders: map[string]string{}, initial: map[string]string{}}
	if path == "-" {
		w.format = WriteStream
	}
	md := schema.Metadata()
	keys, vals := slices.Clone(md.Keys()), slices.Clone(md.Values())
	for _, k := range sortedKeys(opts.Reserve) {
		n := opts.Reserve[k]
		holder := fmt.Sprintf(`{"pate_reserved":%q}`, k)
		if len(holder) > n {
			return nil, fmt.Errorf("%s: reserve for metadata key %q: %d bytes, need at least %d", path, k, n, len(holder))
		}
		i := slices.Index(keys, k)
		if path == "-" && i >= 0 {
			if len(vals[i]) > n {
				return nil, fmt.Errorf("%s: metadata key %q: value of %d bytes exceeds its reserve of %d", path, k, len(vals[i]), n)
			}
			holder = vals[i]
		}
		w.initial[k] = holder
		if path != "-" {
			// Room for the final value; on stdout there is no patching,
			// and so no padding either.
			holder = pad(holder, n)
		}
		w.holders[k] = holder
		if i >= 0 {
			vals[i] = holder
		} else {
			keys, vals = append(keys, k), append(vals, holder)
		}
	}
	meta := arrow.NewMetadata(keys, vals)
	w.schema = arrow.NewSchema(schema.Fields(), &meta)

	var sink io.Writer
	if path == "-" {
		sink = opts.Stdout
		if sink == nil {
			sink = os.Stdout
		}
		if f, ok := sink.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return nil, errors.New("refusing to write binary arrow data to a terminal: redirect standard output to a file or pipe it into another command")
		}
	} else {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("%s: output path is a directory", path)
		}
		mode := os.FileMode(0o644)
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		tmp, err := atomicfile.Create(path, mode)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot create output: %w", path, err)
		}
		w.tmp = tmp
		sink = tmp
	}
	if opts.wrap != nil {
		sink = opts.wrap(sink)
	}
	w.out = &posWriter{w: bufio.NewWriterSize(sink, 1<<20)}

	if w.format == WriteParquetFile {
		pw, err := newParquetOut(w.out, w.schema, opts, w.holders)
		if err != nil {
			w.removeTemp()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		w.pw, w.close = pw, pw.close
		return w, nil
	}
	ipcOpts := []ipc.Option{ipc.WithSchema(w.schema), ipc.WithAllocator(opts.Allocator)}
	if opts.Zstd {
		ipcOpts = append(ipcOpts, ipc.WithZstd())
	}
	if w.format == WriteFile {
		fw, err := ipc.NewFileWriter(w.out, ipcOpts...)
		if err != nil {
			w.removeTemp()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		w.fw, w.close = fw, fw.Close
	} else {
		w.sw = ipc.NewWriter(w.out, ipcOpts...)
		w.close = w.sw.Close
	}
	return w, nil
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func pad(s string, n int) string { return s + strings.Repeat(" ", n-len(s)) }

// Schema returns the schema written, with the placeholders of the reserved
// metadata keys.
func (w *Writer) Schema() *arrow.Schema { return w.schema }

// Patchable reports whether Commit can set the reserved metadata values
// (false for standard output).
func (w *Writer) Patchable() bool { return w.path != "-" }

// Write appends a record batch; rec must have the writer's fields (schema
// metadata may differ). Write does not take ownership of rec.
func (w *Writer) Write(rec arrow.Record) (err error) {
	if w.done {
		return fmt.Errorf("%s: write after commit or abort", w.path)
	}
	if w.err != nil {
		return w.err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: writing batch: %v", w.path, p)
		}
		if err != nil {
			w.err = err
		}
	}()
	switch {
	case w.pw != nil:
		err = w.pw.write(rec)
	case w.fw != nil:
		err = w.fw.Write(rec)
	default:
		err = w.sw.Write(rec)
	}
	if err != nil {
		return fmt.Errorf("%s: writing batch after %d rows: %w", w.path, w.rows, err)
	}
	w.rows += rec.NumRows()
	return nil
}

// Commit finishes the output: it writes the footer (file) or end-of-stream
// marker, overwrites the reserved metadata placeholders with the final
// values (see WriteOptions.Reserve), checks that the metadata reads back
// exact, syncs the file and renames it over the target path
// (and syncs the folder). final may only name reserved keys; a reserved key
// missing from final keeps the value given in Create's schema metadata, or
// the placeholder. On error the temporary file is removed and any previous
// file at the path is untouched.
func (w *Writer) Commit(final map[string]string) (err error) {
	if w.done {
		return fmt.Errorf("%s: commit after commit or abort", w.path)
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	values := make(map[string]string, len(w.reserve)) // padded to the reservation
	exact := make(map[string]string, len(w.reserve))  // as given
	for k, v := range final {
		n, ok := w.reserve[k]
		if !ok {
			w.Abort()
			return fmt.Errorf("%s: metadata key %q was not reserved at create", w.path, k)
		}
		if len(v) > n {
			w.Abort()
			return fmt.Errorf("%s: metadata key %q: value of %d bytes exceeds its reserve of %d", w.path, k, len(v), n)
		}
		values[k], exact[k] = pad(v, n), v
	}
	for k, n := range w.reserve {
		if _, ok := values[k]; !ok { // keeps its placeholder, unpadded
			values[k], exact[k] = pad(w.initial[k], n), w.initial[k]
		}
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: commit: %v", w.path, p)
		}
		if err != nil {
			w.Abort()
		}
	}()
	if w.pw != nil {
		if err := w.pw.setFinal(final); err != nil {
			return fmt.Errorf("%s: %w", w.path, err)
		}
	}
	if err := w.close(); err != nil {
		return fmt.Errorf("%s: finishing output: %w", w.path, err)
	}
	w.close = nil
	if err := w.out.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if w.tmp == nil { // stdout: nothing to patch or rename
		w.done = true
		return nil
	}
	if w.pw != nil {
		if err := w.pw.verify(w.tmp.File, w.out.pos); err != nil {
			return fmt.Errorf("%s: re-reading the parquet output: %w", w.path, err)
		}
	} else if len(values) > 0 {
		if err := w.patch(values, exact); err != nil {
			return fmt.Errorf("%s: patching reserved metadata: %w", w.path, err)
		}
	}
	if err := w.tmp.Commit(); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	w.tmp = nil
	w.done = true
	return nil
}

// patch overwrites the placeholders in the schema message (and the footer
// of a file) with values, each padded to its reservation, then sets each
// flatbuffer string's length to that of the exact value (with the NUL
// flatbuffers put after a string), and checks that the metadata reads back
// exact.
func (w *Writer) patch(values, exact map[string]string) error {
	size := w.out.pos
	var regions [][2]int64
	start := int64(0)
	if w.format == WriteFile {
		start = 8 // "ARROW1" and 2 bytes of padding
	}
	n, err := messageLen(w.tmp.File, start, size)
	if err != nil {
		return err
	}
	regions = append(regions, [2]int64{start, start + n})
	if w.format == WriteFile {
		// ... footer flatbuffer, int32 footer length, "ARROW1".
		var b [4]byte
		if _, err := w.tmp.ReadAt(b[:], size-10); err != nil {
			return err
		}
		flen := int64(int32(binary.LittleEndian.Uint32(b[:])))
		if flen <= 0 || flen > size-10 {
			return fmt.Errorf("bad footer length %d", flen)
		}
		regions = append(regions, [2]int64{size - 10 - flen, size - 10})
	}
	for _, reg := range regions {
		buf := make([]byte, reg[1]-reg[0])
		if _, err := w.tmp.ReadAt(buf, reg[0]); err != nil {
			return err
		}
		for k, v := range values {
			holder := []byte(w.holders[k])
			if c := bytes.Count(buf, holder); c != 1 {
				return fmt.Errorf("placeholder of %q found %d times in bytes [%d, %d), want once", k, c, reg[0], reg[1])
			}
			i := bytes.Index(buf, holder)
			at := reg[0] + int64(i)
			if _, err := w.tmp.WriteAt([]byte(v), at); err != nil {
				return err
			}
			// A flatbuffer string: uint32 length, the bytes, a NUL.
			if i < 4 || binary.LittleEndian.Uint32(buf[i-4:i]) != uint32(len(holder)) {
				return fmt.Errorf("placeholder of %q at %d is not a whole flatbuffer string", k, at)
			}
			var n [4]byte
			binary.LittleEndian.PutUint32(n[:], uint32(len(exact[k])))
			if _, err := w.tmp.WriteAt(n[:], at-4); err != nil {
				return err
			}
			if _, err := w.tmp.WriteAt([]byte{0}, at+int64(len(exact[k]))); err != nil {
				return err
			}
		}
	}
	return w.verify(exact)
}

// messageLen is the length of the encapsulated IPC message at off:
// continuation marker, int32 metadata length, metadata (no body for a
// schema message).
func messageLen(f *os.File, off, size int64) (int64, error) {
	var b [8]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return 0, err
	}
	if binary.LittleEndian.Uint32(b[:4]) != 0xFFFFFFFF {
		return 0, errors.New("schema message has no continuation marker")
	}
	n := int64(int32(binary.LittleEndian.Uint32(b[4:])))
	if n <= 0 || off+8+n > size {
		return 0, fmt.Errorf("bad schema message length %d", n)
	}
	return 8 + n, nil
}

// verify re-reads the schema from the temporary file and checks values.
func (w *Writer) verify(values map[string]string) error {
	var (
		s   *arrow.Schema
		err error
	)
	if w.format == WriteFile {
		var fr *ipc.FileReader
		if fr, err = ipc.NewFileReader(w.tmp); err == nil {
			s = fr.Schema()
			fr.Close()
		}
	} else {
		var rd *ipc.Reader
		if rd, err = ipc.NewReader(io.NewSectionReader(w.tmp, 0, w.out.pos)); err == nil {
			s = rd.Schema()
			rd.Release()
		}
	}
	if err != nil {
		return fmt.Errorf("re-reading patched output: %w", err)
	}
	md := s.Metadata()
	for k, v := range values {
		if got, ok := md.GetValue(k); !ok || got != v {
			return fmt.Errorf("metadata key %q reads back as %.40q, want %.40q", k, got, v)
		}
	}
	return nil
}

// Abort discards the output: the temporary file is removed and any
// previous file at the path is left untouched. On standard output the
// end-of-stream marker is not written, so a reader sees a truncated
// stream. Abort after Commit does nothing.
func (w *Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	if w.close != nil && w.tmp != nil {
		w.close() // release the IPC writer's resources; output is discarded
	}
	w.close = nil
	return w.removeTemp()
}

func (w *Writer) removeTemp() error {
	if w.tmp == nil {
		return nil
	}
	tmp := w.tmp
	w.tmp = nil
	return tmp.Abort()
}
