package arrowfix

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// (Upstream fix that retires this file: see fbcheck.go.)

// CheckedMessageReader is an ipc.MessageReader that checks each message's
// metadata (checkMessage) before Arrow decodes it, and reads bodies into
// buffers that grow with the bytes actually read rather than with the
// length the metadata claims.
type CheckedMessageReader struct {
	r    io.Reader
	max  int64 // the most bytes a compressed buffer may claim
	msg  *ipc.Message
	refs int64
	// layout is what the stream's batches need (nil until its schema is
	// read); dictsDue counts the messages Arrow's ipc.Reader will still
	// read as dictionary batches before the first record batch, whatever
	// their type says.
	layout   *ipcLayout
	dictsDue int
	// Bound, when set, is given each message's bound on one allocation
	// before Arrow decodes the message (Scope.SetLimit).
	Bound *Scope
}

var _ ipc.MessageReader = (*CheckedMessageReader)(nil)

// NewCheckedMessageReader returns a message reader of the IPC stream r
// that checks each message's metadata before Arrow decodes it, a
// compressed buffer claiming at most maxDecompressed bytes uncompressed.
func NewCheckedMessageReader(r io.Reader, maxDecompressed int64) *CheckedMessageReader {
	return &CheckedMessageReader{r: r, max: maxDecompressed, refs: 1}
}

func (m *CheckedMessageReader) Retain() { m.refs++ }

func (m *CheckedMessageReader) Release() {
	m.refs--
	if m.refs == 0 && m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// readN reads exactly n bytes, growing the buffer as data arrives.
func readN(r io.Reader, n int64) ([]byte, error) {
	var buf bytes.Buffer
	got, err := io.CopyN(&buf, r, n)
	if got < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

func (m *CheckedMessageReader) Message() (*ipc.Message, error) {
	var b [4]byte
	if _, err := io.ReadFull(m.r, b[:]); err != nil {
		return nil, fmt.Errorf("reading continuation marker: %w", err)
	}
	n := int32(binary.LittleEndian.Uint32(b[:]))
	if uint32(n) == 0xFFFFFFFF {
		if _, err := io.ReadFull(m.r, b[:]); err != nil {
			return nil, fmt.Errorf("reading message length: %w", io.ErrUnexpectedEOF)
		}
		n = int32(binary.LittleEndian.Uint32(b[:]))
	}
	if n == 0 {
		return nil, io.EOF // end-of-stream marker
	}
	if n < 0 {
		return nil, fmt.Errorf("negative message length %d", n)
	}
	meta, err := readN(m.r, int64(n))
	if err != nil {
		return nil, fmt.Errorf("reading message metadata: %w", err)
	}
	info, err := checkMessage(meta)
	if err != nil {
		return nil, err
	}
	if err := m.sequence(info); err != nil {
		return nil, err
	}
	body, err := readN(m.r, info.bodyLen)
	if err != nil {
		return nil, fmt.Errorf("reading message body: %w", err)
	}
	if err := checkCompressed(info, body, m.max); err != nil {
		return nil, err
	}
	if m.Bound != nil {
		m.Bound.SetLimit(max(info.bodyLen, m.max, int64(len(meta))))
	}
	if m.msg != nil {
		m.msg.Release()
	}
	mb, bb := memory.NewBufferBytes(meta), memory.NewBufferBytes(body)
	m.msg = ipc.NewMessage(mb, bb)
	mb.Release()
	bb.Release()
	return m.msg, nil
}

// sequence checks a message against the stream read so far, as Arrow's
// ipc.Reader will take it: the schema first, then the schema's
// dictionaries (getInitialDicts reads that many messages as dictionary
// batches without looking at their type), then dictionary and record
// batches, each with the vectors its schema's layout needs.
func (m *CheckedMessageReader) sequence(info msgInfo) error {
	switch {
	case m.layout == nil:
		if info.kind != 1 || info.layout == nil {
			return fmt.Errorf("%w: stream starts with a message of type %d, not a schema", errFB, info.kind)
		}
		m.layout, m.dictsDue = info.layout, info.layout.numDicts()
		return nil
	case m.dictsDue > 0:
		if info.kind != 2 {
			return fmt.Errorf("%w: message of type %d where one of %d dictionary batches is due", errFB, info.kind, m.layout.numDicts())
		}
		m.dictsDue--
	}
	return m.layout.check(info)
}

// IPCBlock is a Block of an IPC file footer.
type IPCBlock struct {
	offset  int64
	metaLen int32
	bodyLen int64
	rows    int64 // record batch blocks: the batch's length
}

// NumRows is the length of a record batch block's batch.
func (b IPCBlock) NumRows() int64 { return b.rows }

// CheckIPCFile checks the footer of the IPC file f of the given size and
// returns its record-batch blocks, each checked against the file (a
// compressed buffer claiming at most maxDecompressed bytes uncompressed).
func CheckIPCFile(f *os.File, size, maxDecompressed int64) ([]IPCBlock, error) {
	if size < 6+2+4+6 {
		return nil, fmt.Errorf("%w: file of %d bytes is too short", errFB, size)
	}
	var tail [10]byte
	if _, err := f.ReadAt(tail[:], size-10); err != nil {
		return nil, err
	}
	if string(tail[4:]) != "ARROW1" {
		return nil, fmt.Errorf("%w: no ARROW1 magic at the end (truncated file?)", errFB)
	}
	flen := int64(int32(binary.LittleEndian.Uint32(tail[:4])))
	if flen <= 0 || flen > size-10-8 {
		return nil, fmt.Errorf("%w: footer length %d", errFB, flen)
	}
	footer := make([]byte, flen)
	if _, err := f.ReadAt(footer, size-10-flen); err != nil {
		return nil, err
	}
	root, err := fbRoot(footer)
	if err != nil {
		return nil, err
	}
	c := &fbChecker{budget: 1 << 20}
	s, ok, err := root.sub(1)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: no schema in the footer", errFB)
	}
	if err := c.schema(s); err != nil {
		return nil, err
	}
	layout, err := schemaLayout(s)
	if err != nil {
		return nil, err
	}
	if err := c.keyValues(root, 4); err != nil {
		return nil, err
	}
	var batches []IPCBlock
	// Dictionary blocks, then record batch blocks. Arrow reads a dictionary
	// block as a dictionary batch whatever its message's type says (its
	// RecordBatch vectors then read as other tables), so each block must
	// hold the kind of batch its list is for.
	for _, field := range []int{2, 3} {
		kind := field // 2: dictionary batch, 3: record batch
		start, n, err := root.vector(field, 24)
		if err != nil {
			return nil, err
		}
		for k := 0; k < n; k++ {
			p := start + 24*k
			blk := IPCBlock{
				offset:  int64(binary.LittleEndian.Uint64(footer[p:])),
				metaLen: int32(binary.LittleEndian.Uint32(footer[p+8:])),
				bodyLen: int64(binary.LittleEndian.Uint64(footer[p+16:])),
			}
			info, err := checkBlock(f, blk, size-10-flen, maxDecompressed)
			if err == nil && info.kind != kind {
				err = fmt.Errorf("%w: message of type %d in a block of type %d", errFB, info.kind, kind)
			}
			if err == nil {
				err = layout.check(info)
			}
			if err != nil {
				return nil, fmt.Errorf("block %d: %w", k, err)
			}
			blk.rows = info.rows
			if field == 3 {
				batches = append(batches, blk)
			}
		}
	}
	return batches, nil
}

// checkBlock checks that blk lies within the first end bytes of f and
// that its message metadata is sound, and returns what the metadata says.
func checkBlock(f *os.File, blk IPCBlock, end, maxDecompressed int64) (msgInfo, error) {
	if blk.offset < 8 || blk.metaLen < 8 || blk.bodyLen < 0 || blk.offset > end ||
		int64(blk.metaLen) > end-blk.offset || blk.bodyLen > end-blk.offset-int64(blk.metaLen) {
		return msgInfo{}, fmt.Errorf("%w: block [%d, +%d+%d) outside file", errFB, blk.offset, blk.metaLen, blk.bodyLen)
	}
	meta := make([]byte, blk.metaLen)
	if _, err := f.ReadAt(meta, blk.offset); err != nil {
		return msgInfo{}, err
	}
	// The prefix as Arrow's fileBlock.NewMessage reads it, so that the
	// flatbuffer checked is the one Arrow decodes: a first word of 0 is
	// no prefix at all (a block read with a 4-byte skip here was decoded
	// from its first byte there, and a buffer of 2⁴⁷ bytes passed the
	// check: found by FuzzReadIPCFile).
	switch binary.LittleEndian.Uint32(meta) {
	case 0:
	case 0xFFFFFFFF:
		meta = meta[8:]
	default:
		meta = meta[4:]
	}
	info, err := checkMessage(meta)
	if err != nil {
		return info, err
	}
	if info.bodyLen > blk.bodyLen {
		return info, fmt.Errorf("%w: message body of %d bytes in a block of %d", errFB, info.bodyLen, blk.bodyLen)
	}
	if info.compressed {
		body := make([]byte, info.bodyLen)
		if _, err := f.ReadAt(body, blk.offset+int64(blk.metaLen)); err != nil {
			return info, err
		}
		return info, checkCompressed(info, body, maxDecompressed)
	}
	return info, nil
}
