package pqread

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/pate-tool/pate/io/arrowio/internal/arrowfix"
	"io"
	"os"
	"sync"

	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"
)

// A file's footer holds the metadata of every column chunk, and Arrow keeps
// all of it decoded for as long as the file is open: about 300 bytes a
// chunk once the statistics are dropped. That grows with the file, not
// with what is being read: 4M rows of DuckDB's 2,048-row groups, 64
// columns, is 125,000 chunks and 38 MB, against 10 MB at 1M. A long footer
// is therefore decoded a window of row groups at a time, as the readers
// reach them, and a row group's metadata is let go once its rows are read
// (lazyFooter). Short footers, nearly every file, are decoded whole as
// before.

// lazyFooter decodes the row groups of a parsed footer's metadata (md,
// whose RowGroups has an entry per row group of the file, nil until
// decoded) as they are needed. Every method is safe on a nil *lazyFooter,
// the footer of a file decoded whole, and does nothing there.
type lazyFooter struct {
	windowBytes int // the most bytes of row groups a window decodes (Tuning.FooterWindowBytes)
	r           io.ReaderAt
	at          int64 // file offset of the footer's first byte
	leaves      int   // the schema's leaf columns
	md          *metadata.FileMetaData
	// The values of the fields a window needs besides its row groups
	// (version, schema, num_rows: the key-value metadata, Arrow's schema
	// among it, can be large and is decoded once, with md), and where
	// each row group's bytes are: row group i is
	// footer[spans[i]:spans[i+1]].
	head  []byte
	spans []int64
	rows  []int64 // rows per row group, from the footer

	mu       sync.Mutex
	released []bool
}

// OpenFooter opens f's Parquet reader. A footer of t.LazyFooterMin
// bytes or more that holds nothing the windows cannot take apart is
// decoded without its row groups, which the returned lazyFooter decodes
// later; any other footer is decoded whole by Arrow (and the lazyFooter is
// nil). Either way every row group has been checked to have a column chunk
// with metadata per leaf column, unencrypted. A nil t means
// DefaultTuning().
func OpenFooter(f *os.File, props *parquet.ReaderProperties, t *Tuning) (*file.Reader, *lazyFooter, error) {
	if t == nil {
		t = defaults
	}
	lf, err := scanFooter(f, t)
	if err != nil {
		return nil, nil, err
	}
	if lf == nil {
		pf, err := file.NewParquetReader(f, file.WithReadProps(props))
		if err != nil {
			return nil, nil, err
		}
		if err := checkRowGroups(pf.MetaData(), 0); err != nil {
			return nil, nil, err
		}
		if err := checkArrowSchema(pf.MetaData().KeyValueMetadata(), t.MaxDecompressed); err != nil {
			return nil, nil, err
		}
		dropStatistics(pf.MetaData())
		return pf, nil, nil
	}
	if err := checkArrowSchema(lf.md.KeyValueMetadata(), t.MaxDecompressed); err != nil {
		return nil, nil, err
	}
	pf, err := file.NewParquetReader(f, file.WithReadProps(props), file.WithMetadata(lf.md))
	if err != nil {
		return nil, nil, err
	}
	return pf, lf, nil
}

// checkArrowSchema checks the Arrow schema an Arrow writer stores in the
// footer's key-value metadata ("ARROW:schema": an IPC schema message,
// base64), which pqarrow decodes as Arrow's IPC reader does, trusting its
// lengths: a corrupt one made it allocate 94 GB (FuzzReadParquetStreamed).
// The value is decoded as pqarrow decodes it, and its message is read
// through the checks of the IPC readers (fbcheck.go), a compressed
// buffer claiming at most maxDecompressed bytes.
func checkArrowSchema(kv metadata.KeyValueMetadata, maxDecompressed int64) error {
	v := kv.FindValue("ARROW:schema")
	if v == nil {
		return nil
	}
	var decoded []byte
	var err error
	if len(*v)%4 == 0 {
		decoded, err = base64.StdEncoding.DecodeString(*v)
	}
	if len(decoded) == 0 || err != nil {
		if decoded, err = base64.RawStdEncoding.DecodeString(*v); err != nil {
			return nil // pqarrow fails on it the same way, before any allocation
		}
	}
	r := arrowfix.NewCheckedMessageReader(bytes.NewReader(decoded), maxDecompressed)
	defer r.Release()
	if _, err := r.Message(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("the Arrow schema in the key-value metadata: %w", err)
	}
	return nil
}

// scanFooter reads f's footer and, if it is one to decode a window at a
// time, returns its lazyFooter with the row groups still to be decoded;
// nil (and no error) for a footer to decode whole.
func scanFooter(f *os.File, t *Tuning) (*lazyFooter, error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	size := st.Size()
	var tail [8]byte
	if size < int64(t.LazyFooterMin)+12 {
		return nil, nil
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return nil, nil
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if !bytes.Equal(tail[4:], []byte("PAR1")) || n < int64(t.LazyFooterMin) || n > size-12 {
		return nil, nil
	}
	at := size - 8 - n
	data := make([]byte, n)
	if _, err := f.ReadAt(data, at); err != nil {
		return nil, nil
	}
	fs, ok := scanFileMetaData(data)
	if !ok {
		return nil, nil // Arrow's own decoding says what is wrong with it
	}
	lf := &lazyFooter{r: f, at: at, spans: fs.spans, rows: fs.rows, windowBytes: t.FooterWindowBytes}
	for id := 1; id <= 3; id++ {
		v := fs.fields[id]
		lf.head = append(lf.head, 1<<4|v.typ) // each field's id is the last one's plus 1
		lf.head = append(lf.head, data[v.start:v.end]...)
	}
	// The footer without its row groups: the schema, the row count and
	// the key-value metadata (Arrow's schema among them).
	whole := make([]byte, 0, len(data)-(fs.listEnd-fs.listStart)+1)
	whole = append(whole, data[:fs.listStart]...)
	whole = append(whole, tStruct) // an empty list of structs
	whole = append(whole, data[fs.listEnd:]...)
	md, err := metadata.NewFileMetaData(whole, nil)
	if err != nil {
		return nil, nil
	}
	if md.IsSetEncryptionAlgorithm() || len(md.RowGroups) != 0 {
		return nil, nil
	}
	lf.leaves = md.Schema.NumColumns()
	for i, c := range fs.columns {
		switch {
		case c.chunks != lf.leaves:
			return nil, fmt.Errorf("row group %d has %d column chunks, the schema %d columns", i, c.chunks, lf.leaves)
		case c.noMeta >= 0:
			return nil, fmt.Errorf("row group %d, column %d: the column chunk has no metadata", i, c.noMeta)
		case c.crypto >= 0:
			return nil, fmt.Errorf("row group %d, column %d: encrypted column chunks are not supported", i, c.crypto)
		}
	}
	for range len(fs.rows) {
		md.RowGroups = append(md.RowGroups, nil)
	}
	lf.md = md
	lf.released = make([]bool, len(fs.rows))
	return lf, nil
}

// window is a footer of the fields in head and the row groups in groups
// (their bytes, k of them).
func (lf *lazyFooter) window(groups []byte, k int) []byte {
	out := make([]byte, 0, len(lf.head)+len(groups)+8)
	out = append(out, lf.head...)
	out = append(out, 1<<4|tList) // field 4, row_groups
	if k < 15 {
		out = append(out, byte(k)<<4|tStruct)
	} else {
		out = append(out, 0xf0|tStruct)
		out = binary.AppendUvarint(out, uint64(k))
	}
	out = append(out, groups...)
	return append(out, 0) // the struct's end
}

// numRows is the row count the footer gives row group rg.
func (lf *lazyFooter) numRows(pf *file.Reader, rg int) int64 {
	if lf == nil {
		return pf.MetaData().RowGroup(rg).NumRows()
	}
	return lf.rows[rg]
}

// ensure decodes row group rg's metadata if it is not yet: it and the
// row groups after it, up to Tuning.FooterWindowBytes of the footer. It must be
// called before md.RowGroups[rg] is read, in the goroutine that reads it.
func (lf *lazyFooter) ensure(rg int) error {
	if lf == nil {
		return nil
	}
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if rg < 0 || rg >= len(lf.rows) {
		return fmt.Errorf("no row group %d", rg)
	}
	if lf.md.RowGroups[rg] != nil {
		return nil
	}
	if lf.released[rg] {
		return fmt.Errorf("row group %d: %w", rg, errFooterReleased)
	}
	end := rg + 1
	for end < len(lf.rows) && lf.md.RowGroups[end] == nil && !lf.released[end] &&
		lf.spans[end+1]-lf.spans[rg] <= int64(lf.windowBytes) {
		end++
	}
	sub, err := lf.decode(rg, end)
	if err != nil {
		return err
	}
	copy(lf.md.RowGroups[rg:end], sub.RowGroups)
	return nil
}

// ensureAll decodes every row group's metadata, for readers that may
// read any of them at any time.
func (lf *lazyFooter) ensureAll() error {
	if lf == nil {
		return nil
	}
	for rg := range lf.rows {
		if err := lf.ensure(rg); err != nil {
			return err
		}
	}
	return nil
}

// errFooterReleased is a reader's bug: a row group read again after it
// was let go.
var errFooterReleased = errors.New("footer metadata already released")

// decode decodes row groups from..to-1 on their own, checked and without
// their statistics.
func (lf *lazyFooter) decode(from, to int) (*metadata.FileMetaData, error) {
	groups := make([]byte, lf.spans[to]-lf.spans[from])
	if _, err := lf.r.ReadAt(groups, lf.at+lf.spans[from]); err != nil {
		return nil, fmt.Errorf("row groups %d..%d of the footer: %w", from, to-1, err)
	}
	sub, err := metadata.NewFileMetaData(lf.window(groups, to-from), nil)
	if err != nil {
		return nil, fmt.Errorf("row groups %d..%d of the footer: %w", from, to-1, err)
	}
	if len(sub.RowGroups) != to-from {
		return nil, fmt.Errorf("row groups %d..%d of the footer decode as %d", from, to-1, len(sub.RowGroups))
	}
	if err := checkRowGroups(sub, from); err != nil {
		return nil, err
	}
	for i, g := range sub.RowGroups {
		if g.GetNumRows() != lf.rows[from+i] {
			return nil, fmt.Errorf("row group %d: the footer's row count decodes as %d, scanned as %d", from+i, g.GetNumRows(), lf.rows[from+i])
		}
	}
	dropStatistics(sub)
	return sub, nil
}

// release lets row group rg's metadata go: its rows have been read.
func (lf *lazyFooter) release(rg int) {
	if lf == nil {
		return
	}
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if rg >= 0 && rg < len(lf.rows) {
		lf.md.RowGroups[rg] = nil
		lf.released[rg] = true
	}
}

// each calls fn with the metadata of every row group in turn, decoding
// (and dropping) those not decoded yet a window at a time.
func (lf *lazyFooter) each(md *metadata.FileMetaData, fn func(rg int, g *metadata.RowGroupMetaData)) error {
	if lf == nil {
		for rg := range md.RowGroups {
			fn(rg, md.RowGroup(rg))
		}
		return nil
	}
	for rg := 0; rg < len(lf.rows); {
		// Taken under the lock: the reader may let the row group go.
		var g *metadata.RowGroupMetaData
		lf.mu.Lock()
		if lf.md.RowGroups[rg] != nil {
			g = lf.md.RowGroup(rg)
		}
		lf.mu.Unlock()
		if g != nil {
			fn(rg, g)
			rg++
			continue
		}
		end := rg + 1
		for end < len(lf.rows) && lf.spans[end+1]-lf.spans[rg] <= int64(lf.windowBytes) {
			end++
		}
		sub, err := lf.decode(rg, end)
		if err != nil {
			return err
		}
		for i := range sub.RowGroups {
			fn(rg+i, sub.RowGroup(i))
		}
		rg = end
	}
	return nil
}

// footerScan is what scanFileMetaData finds in a footer: where its
// row_groups list lies (listStart..listEnd, from its header), each row
// group's span in the footer and row count, and what the checks of
// checkRowGroups need of its column chunks.
type footerScan struct {
	listStart, listEnd int
	fields             [4]fieldSpan // fields 1 to 3: version, schema, num_rows
	spans              []int64
	rows               []int64
	columns            []chunkScan
}

// fieldSpan is where a field's value lies in the footer, and its type.
type fieldSpan struct {
	start, end int
	typ        byte
}

// chunkScan is what the scan saw of a row group's column chunks: how many,
// and the first without metadata and the first encrypted (-1: none).
type chunkScan struct {
	chunks, noMeta, crypto int
}

// scanFileMetaData walks a footer (a Thrift FileMetaData struct) without
// decoding it. ok is false if it is not well formed, has no row_groups
// list of structs, or a row group lacks its row count: Arrow's decoding
// then says what is wrong.
func scanFileMetaData(b []byte) (fs footerScan, ok bool) {
	r := &thriftReader{b: b}
	found := false
	var last int16
	for !r.bad {
		id, t, stop := r.field(&last)
		if stop {
			break
		}
		if id != 4 || t != tList || found {
			start := r.pos
			r.skip(t, 0)
			if id >= 1 && id <= 3 {
				fs.fields[id] = fieldSpan{start, r.pos, t}
			}
			continue
		}
		found = true
		fs.listStart = r.pos
		c := r.byte()
		n := uint64(c >> 4)
		if n == 15 {
			n = r.uvarint()
		}
		if c&0x0f != tStruct || r.bad || n > uint64(len(b)-r.pos) {
			return fs, false
		}
		fs.spans = make([]int64, 0, n+1)
		fs.rows = make([]int64, 0, n)
		fs.columns = make([]chunkScan, 0, n)
		for range n {
			fs.spans = append(fs.spans, int64(r.pos))
			rows, cs, ok := scanRowGroup(r)
			if !ok {
				return fs, false
			}
			fs.rows = append(fs.rows, rows)
			fs.columns = append(fs.columns, cs)
		}
		fs.spans = append(fs.spans, int64(r.pos))
		fs.listEnd = r.pos
	}
	// A window repeats version, schema and num_rows, which Thrift
	// requires, with their types.
	required := fs.fields[1].typ == tI32 && fs.fields[2].typ == tList && fs.fields[3].typ == tI64
	return fs, found && required && !r.bad && r.pos == len(b)
}

// scanRowGroup passes over a RowGroup struct, noting its num_rows (field
// 3) and its columns (field 1: a list of ColumnChunk, whose meta_data is
// field 3 and crypto_metadata field 8).
func scanRowGroup(r *thriftReader) (rows int64, cs chunkScan, ok bool) {
	cs = chunkScan{noMeta: -1, crypto: -1}
	var last int16
	haveRows, haveCols := false, false
	for !r.bad {
		id, t, stop := r.field(&last)
		if stop {
			break
		}
		switch {
		case id == 3 && t == tI64:
			rows, haveRows = r.zigzag(), true
		case id == 1 && t == tList && !haveCols:
			haveCols = true
			c := r.byte()
			n := uint64(c >> 4)
			if n == 15 {
				n = r.uvarint()
			}
			if c&0x0f != tStruct || n > uint64(len(r.b)-r.pos) {
				return 0, cs, false
			}
			cs.chunks = int(n)
			for i := 0; i < int(n) && !r.bad; i++ {
				var clast int16
				meta := false
				for !r.bad {
					cid, ct, stop := r.field(&clast)
					if stop {
						break
					}
					if cid == 3 && ct == tStruct {
						meta = true
					}
					if cid == 8 && cs.crypto < 0 {
						cs.crypto = i
					}
					r.skip(ct, 2)
				}
				if !meta && cs.noMeta < 0 {
					cs.noMeta = i
				}
			}
		default:
			r.skip(t, 1)
		}
	}
	return rows, cs, haveRows && haveCols && !r.bad
}
