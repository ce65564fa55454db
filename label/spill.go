package label

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"golang.org/x/sync/errgroup"

	"github.com/pate-tool/pate/learners"
)

// spill holds the sensitive rows once read, encoded, grouped by the keyed
// hash of their privacy unit, so that the run's memory does not grow with
// the number of sensitive rows: the rows are encoded as their batch is read
// (float32, the teachers' input), and each row's record goes to one of
// spillBuckets buckets by the top bits of its unit's keyed hash. A bucket
// holds its records in memory up to its share of spillBudget, then appends
// them to one temporary file (unlinked as soon as it is opened) as a chunk
// of that bucket.
//
// A teacher is a range of the hash (teacherOfHash: the partition function,
// a multiply-shift of the hash onto [0, k)), so a teacher's rows are those
// of a run of buckets, read in order: the number of teachers can be fixed
// after the rows are read (from a noisy count), and every teacher gets the
// rows it would have got had the number been known from the start, in the
// order of the sensitive file.
//
// A record is the row's number (uint64), the unit's keyed hash (uint64), its
// identity (SHA-256), flags (uint32), one label code per label column
// (uint32: 0 for no usable label, else 1 + the value's index in the
// column's dictionary), then the encoded row (dim float32, native order:
// the file never leaves the process).
type spill struct {
	dim, nl int
	recSize int

	bufs   [][]byte       // per bucket: the records not yet in the file
	chunks [][]spillChunk // per bucket: its chunks in the file, in order
	budget int            // bytes the buckets hold in memory, at most

	f      *os.File
	path   string // the file's name while it could not be unlinked
	size   int64
	failed error // a write failed: the spill is unusable
	prevGC int   // the collector's setting before the file (gcSet)
	gcSet  bool

	total   int // rows read
	dropped int // rows whose privacy unit is null
	dicts   []*labelDict
	nulls   []int // per label column: rows whose label is null
}

// spillBudget is the memory the spill holds before it writes its buckets
// to the file; it is the main part of the sensitive side's memory, whatever
// the number of rows (a variable for the tests).
var spillBudget = 64 << 20

// spillChunk is a run of one bucket's records in the file.
type spillChunk struct {
	off int64
	n   int
}

// labelDict numbers a label column's distinct values as they are read.
type labelDict struct {
	index  map[string]uint32
	values []string
	usable int // rows with a label and a unit
}

const (
	spillBucketBits = 12
	spillBuckets    = 1 << spillBucketBits

	recRow    = 0
	recHash   = 8
	recID     = 16
	recFlags  = 48
	recLabels = 52

	flagDropped = 1 // the row's privacy unit is null: it belongs to no teacher
)

func newSpill(dim, nl int) *spill {
	return &spill{dim: dim, nl: nl, recSize: recLabels + 4*nl + 4*dim,
		bufs: make([][]byte, spillBuckets), chunks: make([][]spillChunk, spillBuckets), budget: spillBudget,
		dicts: newDicts(nl), nulls: make([]int, nl)}
}

func newDicts(nl int) []*labelDict {
	d := make([]*labelDict, nl)
	for j := range d {
		d[j] = &labelDict{index: make(map[string]uint32)}
	}
	return d
}

// bucketOf is the bucket of the records whose unit hashes to h.
func bucketOf(h uint64) int { return int(h >> (64 - spillBucketBits)) }

// teacherOfHash maps a unit's keyed hash onto [0, k) (Lemire's
// multiply-shift: its bias is below k/2^64, far under anything
// observable). It is monotone in h, so a teacher is a range of hashes.
func teacherOfHash(h uint64, k int) int {
	hi, _ := bits.Mul64(h, uint64(k))
	return int(hi)
}

// close removes the spill's file.
func (s *spill) close() {
	if s == nil {
		return
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	if s.path != "" {
		os.Remove(s.path)
		s.path = ""
	}
	if s.gcSet {
		debug.SetGCPercent(s.prevGC)
		s.gcSet = false
	}
	s.bufs, s.chunks = nil, nil
}

// sensitiveReader reads the sensitive batches ahead, in a goroutine of its
// own, so that reading overlaps what comes before and during the spill.
type sensitiveReader struct {
	ch     chan readBatch
	cancel context.CancelFunc
}

type readBatch struct {
	rec arrow.Record
	err error
}

// readAhead starts reading r, keeping at most ahead batches read and not
// yet taken. The caller calls close, whatever happens.
func readAhead(ctx context.Context, r RecordReader, ahead int) *sensitiveReader {
	rctx, cancel := context.WithCancel(ctx)
	sr := &sensitiveReader{ch: make(chan readBatch, ahead), cancel: cancel}
	go func() {
		defer close(sr.ch)
		for {
			if err := rctx.Err(); err != nil {
				sr.ch <- readBatch{err: err}
				return
			}
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				return
			}
			select {
			case sr.ch <- readBatch{rec, err}:
			case <-rctx.Done():
				if rec != nil {
					rec.Release()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return sr
}

// close stops the reading and releases what was read and not taken.
func (sr *sensitiveReader) close() {
	if sr == nil {
		return
	}
	sr.cancel()
	for rd := range sr.ch {
		if rd.rec != nil {
			rd.rec.Release()
		}
	}
}

// ingest reads every batch of sr into a new spill: the class labels, the
// units' identities and keyed hashes (under the partition key), and the
// rows encoded by enc.
func (l *Labeler) ingest(ctx context.Context, sr *sensitiveReader, enc *learners.Encoder) (_ *spill, err error) {
	s := newSpill(enc.Dim(), len(l.labelFields))
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	in := l.newIngester(s, enc)
	for bi := 0; ; bi++ {
		var rd readBatch
		var ok bool
		select {
		case rd, ok = <-sr.ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !ok {
			break
		}
		if rd.err != nil {
			if rd.rec != nil {
				rd.rec.Release()
			}
			return nil, rd.err
		}
		err := in.add(rd.rec, bi)
		rd.rec.Release()
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ingestRecords is ingest for batches in memory (the caller keeps them).
func (l *Labeler) ingestRecords(recs []arrow.Record, enc *learners.Encoder) (*spill, error) {
	s := newSpill(enc.Dim(), len(l.labelFields))
	in := l.newIngester(s, enc)
	for bi, rec := range recs {
		if err := in.add(rec, bi); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// ingester adds batches to a spill.
type ingester struct {
	l     *Labeler
	s     *spill
	enc   *learners.Encoder
	part  *partitioner
	x     []float32
	hash  []uint64
	ids   [][32]byte
	drop  []bool
	codes [][]uint32
}

func (l *Labeler) newIngester(s *spill, enc *learners.Encoder) *ingester {
	return &ingester{l: l, s: s, enc: enc, part: newPartitioner(1, l.source(streamPartition)),
		codes: make([][]uint32, s.nl)}
}

// add encodes, identifies and spills the rows of one batch (the bi-th).
func (in *ingester) add(rec arrow.Record, bi int) error {
	l, s, cfg := in.l, in.s, &in.l.cfg
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	p, err := in.enc.Prepare(rec)
	if err != nil {
		return invalid("%s, batch %d: %v", cfg.sens(), bi, err)
	}
	dim := s.dim
	in.x = growF32(in.x, n*dim)
	in.hash = growU64(in.hash, n)
	if cap(in.ids) < n {
		in.ids = make([][32]byte, n)
	}
	in.ids = in.ids[:n]
	if cap(in.drop) < n {
		in.drop = make([]bool, n)
	}
	in.drop = in.drop[:n]
	clear(in.drop)
	sch := rec.Schema()
	for j, lf := range l.labelFields {
		lc := rec.Column(sch.FieldIndices(lf.Name)[0])
		d := s.dicts[j]
		c := growU32(in.codes[j], n)
		for i := range n {
			v, ok := valueText(lc, i)
			if !ok {
				c[i] = 0
				s.nulls[j]++
				continue
			}
			k, seen := d.index[v]
			if !seen {
				k = uint32(len(d.values))
				d.index[v] = k
				d.values = append(d.values, v)
			}
			c[i] = k + 1
		}
		in.codes[j] = c
	}
	var uc arrow.Array
	if cfg.PrivacyUnit != "" {
		uc = rec.Column(sch.FieldIndices(cfg.PrivacyUnit)[0])
	}
	// Identities and encoding in parts of the batch, one per core at a
	// time (a row of an embedding takes microseconds).
	g := new(errgroup.Group)
	g.SetLimit(runtime.GOMAXPROCS(0))
	cols := rec.Columns()
	for lo := 0; lo < n; lo += identityPart {
		hi := min(n, lo+identityPart)
		g.Go(func() error {
			part := in.part.clone()
			if uc != nil {
				var buf []byte
				for i := lo; i < hi; i++ {
					if uc.IsNull(i) {
						in.drop[i] = true
						continue
					}
					buf = rowIdentity(append(buf[:0], 1), []arrow.Array{uc}, i)
					in.ids[i] = sha256.Sum256(buf)
					in.hash[i] = part.hash(in.ids[i][:])
				}
			} else {
				blk := make([][]byte, min(hi-lo, 256))
				for b := lo; b < hi; b += len(blk) {
					rows := blk[:min(len(blk), hi-b)]
					for k := range rows {
						rows[k] = append(rows[k][:0], 0)
					}
					rowIdentities(rows, cols, b)
					for k, id := range rows {
						in.ids[b+k] = sha256.Sum256(id)
						in.hash[b+k] = part.hash(in.ids[b+k][:])
					}
				}
			}
			p.EncodeRows(lo, hi, &learners.Matrix{Data: in.x[lo*dim : hi*dim : hi*dim]})
			return nil
		})
	}
	_ = g.Wait() // the tasks return no error
	first := s.total
	for i := range n {
		var flags uint32
		h := in.hash[i]
		if in.drop[i] {
			flags, h = flagDropped, 0
			s.dropped++
		}
		b := bucketOf(h)
		buf := s.bufs[b]
		o := len(buf)
		if cap(buf)-o < s.recSize {
			if o+s.recSize > s.bucketCap() {
				if err := s.flushBucket(b, cfg.sens()); err != nil {
					return err
				}
				buf, o = s.bufs[b], 0
			}
			if cap(buf) < o+s.recSize {
				nb := make([]byte, o, min(max(2*cap(buf), 16*s.recSize), s.bucketCap()))
				copy(nb, buf)
				buf = nb
			}
		}
		buf = buf[:o+s.recSize]
		r := buf[o:]
		binary.LittleEndian.PutUint64(r[recRow:], uint64(first+i))
		binary.LittleEndian.PutUint64(r[recHash:], h)
		copy(r[recID:recFlags], in.ids[i][:])
		binary.LittleEndian.PutUint32(r[recFlags:], flags)
		for j := range s.nl {
			c := in.codes[j][i]
			if in.drop[i] {
				c = 0
			} else if c != 0 {
				s.dicts[j].usable++
			}
			binary.LittleEndian.PutUint32(r[recLabels+4*j:], c)
		}
		if dim > 0 {
			copy(r[recLabels+4*s.nl:], f32Bytes(in.x[i*dim:(i+1)*dim]))
		}
		s.bufs[b] = buf
	}
	s.total += n
	return nil
}

// bucketCap is the most a bucket holds in memory: its share of the budget,
// at least one record.
func (s *spill) bucketCap() int {
	return max(s.budget/spillBuckets/s.recSize, 1) * s.recSize
}

// flushBucket appends bucket b's held records to the file as one chunk.
func (s *spill) flushBucket(b int, name string) error {
	if s.failed != nil {
		return s.failed
	}
	if s.f == nil {
		// The rows outgrow the spill's memory: from here on reading
		// allocates a batch's worth of garbage per batch for as long as
		// the file is long, and with the collector's default pacing the
		// heap grew to twice the live data. It keeps it within a quarter
		// (restored by close).
		s.prevGC, s.gcSet = debug.SetGCPercent(25), true
		f, err := os.CreateTemp("", "pate-sensitive-*.spill")
		if err != nil {
			return fmt.Errorf("%s: creating the spill file: %w", name, err)
		}
		s.f = f
		// Unlinked at once: the file goes with the process however it
		// ends. Where that is refused (Windows), close removes it.
		if os.Remove(f.Name()) != nil {
			s.path = f.Name()
		}
	}
	buf := s.bufs[b]
	if _, err := s.f.WriteAt(buf, s.size); err != nil {
		s.failed = fmt.Errorf("%s: writing the spill file: %w", name, err)
		return s.failed
	}
	s.chunks[b] = append(s.chunks[b], spillChunk{off: s.size, n: len(buf)})
	s.size += int64(len(buf))
	s.bufs[b] = buf[:0]
	return nil
}

// bytes is the size of every record of the spill.
func (s *spill) bytes() int64 {
	n := s.size
	for _, b := range s.bufs {
		n += int64(len(b))
	}
	return n
}

// bucketBytes is the size of bucket b's records.
func (s *spill) bucketBytes(b int) int {
	n := len(s.bufs[b])
	for _, c := range s.chunks[b] {
		n += c.n
	}
	return n
}

// bucket returns bucket b's records, in the order they were read: the
// spill's own memory when none is in the file (read only), else read into
// *scratch, which it grows as needed.
func (s *spill) bucket(b int, scratch *[]byte) ([]byte, error) {
	if len(s.chunks[b]) == 0 {
		return s.bufs[b], nil
	}
	n := s.bucketBytes(b)
	dst := *scratch
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	*scratch = dst
	o := 0
	for _, c := range s.chunks[b] {
		if _, err := s.f.ReadAt(dst[o:o+c.n], c.off); err != nil {
			return nil, fmt.Errorf("reading the spill file: %w", err)
		}
		o += c.n
	}
	copy(dst[o:], s.bufs[b])
	return dst, nil
}

// rec is one record of the spill.
type spillRec []byte

func (r spillRec) row() int          { return int(binary.LittleEndian.Uint64(r[recRow:])) }
func (r spillRec) hash() uint64      { return binary.LittleEndian.Uint64(r[recHash:]) }
func (r spillRec) id() (id [32]byte) { copy(id[:], r[recID:recFlags]); return id }
func (r spillRec) dropped() bool     { return binary.LittleEndian.Uint32(r[recFlags:])&flagDropped != 0 }
func (r spillRec) code(j int) uint32 { return binary.LittleEndian.Uint32(r[recLabels+4*j:]) }

// x copies the encoded row into dst (dim values).
func (r spillRec) x(nl int, dst []float32) {
	copy(f32Bytes(dst), r[recLabels+4*nl:])
}

// f32Bytes is the memory of v as bytes.
func f32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func growU64(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}

func growU32(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	return s[:n]
}
