package arrowfix

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// This file checks Arrow IPC flatbuffer metadata before Arrow Go decodes
// it. Arrow Go v15 trusts the lengths in the metadata: a corrupt vector
// length makes it call make() with billions of elements, and a corrupt
// buffer or body length makes it allocate that many bytes before reading.
// Both end the process with "fatal error: out of memory", which recover
// cannot catch. The checks below bound every vector by the metadata's size
// and every buffer by the message body.
//
// Upstream fix that retires this file (and ipccheck.go): Arrow Go verifying
// flatbuffer messages and bounding its allocations by the bytes present, as
// Arrow C++ does since ARROW-5605, with its readers run against the
// malformed-IPC fuzz corpus.

var errFB = errors.New("invalid flatbuffer metadata")

type fbTable struct {
	b     []byte
	pos   int // table start
	vt    int // vtable start
	vtLen int
	tbLen int
}

func u16(b []byte, p int) int { return int(binary.LittleEndian.Uint16(b[p:])) }
func u32(b []byte, p int) int { return int(binary.LittleEndian.Uint32(b[p:])) }

// fbRoot returns the root table of b.
func fbRoot(b []byte) (fbTable, error) {
	if len(b) < 4 {
		return fbTable{}, errFB
	}
	return fbAt(b, u32(b, 0))
}

func fbAt(b []byte, pos int) (fbTable, error) {
	if pos < 0 || pos+4 > len(b) || pos%4 != 0 {
		return fbTable{}, fmt.Errorf("%w: table at %d", errFB, pos)
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(b[pos:])))
	if vt < 0 || vt+4 > len(b) || vt%2 != 0 {
		return fbTable{}, fmt.Errorf("%w: vtable at %d", errFB, vt)
	}
	t := fbTable{b: b, pos: pos, vt: vt, vtLen: u16(b, vt), tbLen: u16(b, vt+2)}
	if t.vtLen < 4 || t.vtLen%2 != 0 || vt+t.vtLen > len(b) || t.tbLen < 4 || pos+t.tbLen > len(b) {
		return fbTable{}, fmt.Errorf("%w: table at %d out of bounds", errFB, pos)
	}
	return t, nil
}

// field returns the absolute position of field i (size bytes), or -1.
func (t fbTable) field(i, size int) (int, error) {
	if 4+2*i+2 > t.vtLen {
		return -1, nil
	}
	off := u16(t.b, t.vt+4+2*i)
	if off == 0 {
		return -1, nil
	}
	if off+size > t.tbLen {
		return -1, fmt.Errorf("%w: field %d out of table", errFB, i)
	}
	return t.pos + off, nil
}

func (t fbTable) i64(i int) (int64, error) {
	p, err := t.field(i, 8)
	if p < 0 || err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(t.b[p:])), nil
}

func (t fbTable) i16(i int) (int, error) {
	p, err := t.field(i, 2)
	if p < 0 || err != nil {
		return 0, err
	}
	return int(int16(binary.LittleEndian.Uint16(t.b[p:]))), nil
}

func (t fbTable) u8(i int) (int, error) {
	p, err := t.field(i, 1)
	if p < 0 || err != nil {
		return 0, err
	}
	return int(t.b[p]), nil
}

// ref follows the offset in field i; -1 when absent.
func (t fbTable) ref(i int) (int, error) {
	p, err := t.field(i, 4)
	if p < 0 || err != nil {
		return -1, err
	}
	q := p + u32(t.b, p)
	if q < 0 || q+4 > len(t.b) {
		return -1, fmt.Errorf("%w: offset of field %d out of bounds", errFB, i)
	}
	return q, nil
}

// vector checks the vector in field i with elements of elem bytes and
// returns the position of its first element and its length (n = 0 when
// absent).
func (t fbTable) vector(i, elem int) (start, n int, err error) {
	q, err := t.ref(i)
	if q < 0 || err != nil {
		return 0, 0, err
	}
	n = u32(t.b, q)
	if n > (len(t.b)-q-4)/elem {
		return 0, 0, fmt.Errorf("%w: vector of %d elements in %d bytes", errFB, n, len(t.b))
	}
	return q + 4, n, nil
}

func (t fbTable) sub(i int) (fbTable, bool, error) {
	q, err := t.ref(i)
	if q < 0 || err != nil {
		return fbTable{}, false, err
	}
	s, err := fbAt(t.b, q)
	return s, err == nil, err
}

// tables returns the tables of the vector of tables in field i.
func (t fbTable) tables(i int, visit func(fbTable) error) error {
	start, n, err := t.vector(i, 4)
	if err != nil {
		return err
	}
	for k := 0; k < n; k++ {
		p := start + 4*k
		s, err := fbAt(t.b, p+u32(t.b, p))
		if err != nil {
			return err
		}
		if err := visit(s); err != nil {
			return err
		}
	}
	return nil
}

// fbChecker walks one metadata buffer with a visit budget, so a DAG of
// shared tables cannot make the walk exponential.
type fbChecker struct{ budget int }

func (c *fbChecker) spend() error {
	c.budget--
	if c.budget < 0 {
		return fmt.Errorf("%w: too many tables", errFB)
	}
	return nil
}

func (c *fbChecker) keyValues(t fbTable, i int) error {
	return t.tables(i, func(kv fbTable) error {
		if err := c.spend(); err != nil {
			return err
		}
		if _, _, err := kv.vector(0, 1); err != nil {
			return err
		}
		_, _, err := kv.vector(1, 1)
		return err
	})
}

func (c *fbChecker) schema(s fbTable) error {
	if err := c.fields(s, 1, 0); err != nil {
		return err
	}
	if err := c.keyValues(s, 2); err != nil {
		return err
	}
	_, _, err := s.vector(3, 8)
	return err
}

func (c *fbChecker) fields(t fbTable, i, depth int) error {
	if depth > 64 {
		return fmt.Errorf("%w: fields nested too deep", errFB)
	}
	return t.tables(i, func(f fbTable) error {
		if err := c.spend(); err != nil {
			return err
		}
		if _, _, err := f.vector(0, 1); err != nil { // name
			return err
		}
		typ, err := f.u8(2)
		if err != nil {
			return err
		}
		if tt, ok, err := f.sub(3); err != nil {
			return err
		} else if ok {
			switch typ {
			case 14: // Union: typeIds
				_, _, err = tt.vector(1, 4)
			case 10: // Timestamp: timezone
				_, _, err = tt.vector(1, 1)
			}
			if err != nil {
				return err
			}
		}
		if d, ok, err := f.sub(4); err != nil { // dictionary encoding
			return err
		} else if ok {
			if _, _, err := d.sub(1); err != nil {
				return err
			}
		}
		if err := c.fields(f, 5, depth+1); err != nil {
			return err
		}
		return c.keyValues(f, 6)
	})
}

// msgInfo is what checkMessage learns from a message's metadata.
type msgInfo struct {
	kind       int   // 1 schema, 2 dictionary batch, 3 record batch
	version    int   // metadata version (MetadataVersion: V5 is 4)
	bodyLen    int64 // declared body length
	rows       int64 // record batch: its length
	nodes      int   // batches: how many field nodes
	buffers    [][2]int64
	variadic   []int64 // batches: variadic buffer counts, nil when absent
	dictID     int64   // dictionary batch: its id
	compressed bool
	layout     *ipcLayout // schema: what its batches need
}

// checkMessage checks an IPC Message flatbuffer (without its prefix).
func checkMessage(meta []byte) (msgInfo, error) {
	var info msgInfo
	c := &fbChecker{budget: 1 << 20}
	m, err := fbRoot(meta)
	if err != nil {
		return info, err
	}
	if info.version, err = m.i16(0); err != nil {
		return info, err
	}
	if info.kind, err = m.u8(1); err != nil {
		return info, err
	}
	if info.bodyLen, err = m.i64(3); err != nil {
		return info, err
	}
	if info.bodyLen < 0 {
		return info, fmt.Errorf("%w: negative body length", errFB)
	}
	if err := c.keyValues(m, 4); err != nil {
		return info, err
	}
	h, ok, err := m.sub(2)
	if err != nil || !ok {
		return info, err
	}
	switch info.kind {
	case 1:
		if err := c.schema(h); err != nil {
			return info, err
		}
		info.layout, err = schemaLayout(h)
		return info, err
	case 2:
		if info.dictID, err = h.i64(0); err != nil {
			return info, err
		}
		rb, ok, err := h.sub(1)
		if err != nil || !ok {
			return info, err
		}
		return info, checkRecordBatch(rb, &info)
	case 3:
		return info, checkRecordBatch(h, &info)
	}
	return info, nil
}

func checkRecordBatch(rb fbTable, info *msgInfo) error {
	length, err := rb.i64(0)
	if err != nil {
		return err
	}
	if length < 0 || length > max(8*info.bodyLen, 1<<16) {
		return fmt.Errorf("%w: batch of %d rows with a body of %d bytes", errFB, length, info.bodyLen)
	}
	info.rows = length
	start, n, err := rb.vector(1, 16) // FieldNode{length, null_count}
	if err != nil {
		return err
	}
	info.nodes = n
	for k := 0; k < n; k++ {
		l := int64(binary.LittleEndian.Uint64(rb.b[start+16*k:]))
		nulls := int64(binary.LittleEndian.Uint64(rb.b[start+16*k+8:]))
		if l < 0 || nulls < 0 || nulls > l || l > max(8*info.bodyLen, 1<<16) {
			return fmt.Errorf("%w: field node %d with length %d, %d nulls", errFB, k, l, nulls)
		}
	}
	start, n, err = rb.vector(2, 16) // Buffer{offset, length}
	if err != nil {
		return err
	}
	for k := 0; k < n; k++ {
		off := int64(binary.LittleEndian.Uint64(rb.b[start+16*k:]))
		l := int64(binary.LittleEndian.Uint64(rb.b[start+16*k+8:]))
		if off < 0 || l < 0 || off > info.bodyLen || l > info.bodyLen-off {
			return fmt.Errorf("%w: buffer %d [%d, +%d) outside body of %d bytes", errFB, k, off, l, info.bodyLen)
		}
		info.buffers = append(info.buffers, [2]int64{off, l})
	}
	_, ok, err := rb.sub(3)
	if err != nil {
		return err
	}
	info.compressed = ok
	if start, n, err = rb.vector(4, 8); err != nil {
		return err
	}
	if start > 0 { // present (absent: Arrow reads every count as 0)
		info.variadic = make([]int64, n)
		for k := range info.variadic {
			info.variadic[k] = int64(binary.LittleEndian.Uint64(rb.b[start+8*k:]))
		}
	}
	return nil
}

// checkCompressed checks the uncompressed-length prefix of each compressed
// buffer in body: at most maxDecompressed bytes (Arrow allocates them
// before decompressing).
func checkCompressed(info msgInfo, body []byte, maxDecompressed int64) error {
	if !info.compressed {
		return nil
	}
	for k, b := range info.buffers {
		if b[1] == 0 {
			continue
		}
		if b[1] < 8 || b[0]+8 > int64(len(body)) {
			return fmt.Errorf("%w: compressed buffer %d too short", errFB, k)
		}
		n := int64(binary.LittleEndian.Uint64(body[b[0]:]))
		if n != -1 && (n < 0 || n > maxDecompressed) {
			return fmt.Errorf("%w: compressed buffer %d claims %d bytes uncompressed", errFB, k, n)
		}
	}
	return nil
}
