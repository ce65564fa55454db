package arrowio

import (
	"errors"
	"fmt"
	"github.com/pate-tool/pate/io/arrowio/internal/arrowfix"
	"github.com/pate-tool/pate/io/arrowio/internal/pqread"
	"io"
	"os"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
)

type ipcFileSource struct {
	rows    int64 // from the footer's blocks
	name    string
	fr      *ipc.FileReader
	i       int
	mem     *arrowfix.Scope
	recycle *pqread.Recycler
	closed  bool
}

// ipcRecycleBytes bounds the buffers an Arrow IPC reader keeps for reuse.
// Arrow's readers allocate every batch's body and each of its buffers
// afresh and fill them whole (read, or decompressed, into): from a
// recycler, a stream of batches reuses a few batches' buffers instead of
// asking the Go heap, and the kernel, for zeroed memory each time (that
// took a third of reading a file of 64 float64 columns, and the collector
// as much again).
const ipcRecycleBytes = 256 << 20

func openIPCFile(f *os.File, name string, opts ReadOptions) (source, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tune := opts.tuning()
	blocks, err := arrowfix.CheckIPCFile(f, st.Size(), tune.MaxDecompressed)
	if err != nil {
		return nil, fmt.Errorf("%s: corrupt arrow ipc file: %w: %w", name, ErrFormat, err)
	}
	rc := pqread.NewRecycler(opts.Allocator, ipcRecycleBytes, tune.PoisonRecycled, opts.stats)
	mem := arrowfix.NewScope(rc)
	mem.SetLimit(max(st.Size(), tune.MaxDecompressed)) // a block's body, or a decompressed buffer
	fr, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		mem.Rollback()
		rc.Close()
		return nil, fmt.Errorf("%s: corrupt arrow ipc file: %w: %w", name, ErrFormat, err)
	}
	if fr.NumRecords() != len(blocks) {
		fr.Close()
		mem.Rollback()
		rc.Close()
		return nil, fmt.Errorf("%s: corrupt arrow ipc file: %d record batches, footer lists %d: %w", name, fr.NumRecords(), len(blocks), ErrFormat)
	}
	mem.Commit()
	var rows int64
	for _, b := range blocks {
		rows += b.NumRows()
	}
	return withoutViews(&ipcFileSource{name: name, fr: fr, mem: mem, recycle: rc, rows: rows}, opts.Allocator), nil
}

func (s *ipcFileSource) schema() *arrow.Schema { return s.fr.Schema() }

// numRows adds up the lengths the batches' metadata declare (checked
// against each batch when it is read: validateRecord).
func (s *ipcFileSource) numRows() int64 { return s.rows }

func (s *ipcFileSource) next() (arrow.Record, error) {
	if s.i >= s.fr.NumRecords() {
		s.recycle.Close() // nothing will take the kept buffers
		return nil, io.EOF
	}
	rec, err := failOnPanic(s.fail, func() (arrow.Record, error) { return s.fr.RecordAt(s.i) }) // owned by us, unlike Record(i)
	if err != nil {
		s.fail()
		return nil, fmt.Errorf("%s: corrupt arrow ipc file at batch %d: %w: %w", s.name, s.i, ErrFormat, err)
	}
	s.i++
	if err := validateRecord(rec); err != nil {
		rec.Release()
		s.fail()
		return nil, fmt.Errorf("%s: corrupt arrow ipc file at batch %d: %w: %w", s.name, s.i-1, ErrFormat, err)
	}
	s.mem.Commit()
	return rec, nil
}

// failOnPanic runs read; if the decoder panics (Arrow v15's IPC loader
// panics on some hostile buffers rather than returning an error), fail
// frees what it leaked before the panic goes on to Reader.guard, which
// turns it into an error. Without it the buffers the decoder had loaded
// for the batch stayed allocated (found by FuzzReadIPCFile: 256 bytes).
func failOnPanic(fail func(), read func() (arrow.Record, error)) (arrow.Record, error) {
	defer func() {
		if p := recover(); p != nil {
			fail()
			panic(p)
		}
	}()
	return read()
}

// fail closes the reader after a batch failed to decode and frees what
// the decoder leaked (see scope).
func (s *ipcFileSource) fail() {
	if !s.closed {
		s.closed = true
		s.fr.Close()
		s.mem.Rollback()
		s.recycle.Close()
	}
}

func (s *ipcFileSource) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	defer s.recycle.Close()
	return s.fr.Close()
}

type ipcStreamSource struct {
	name     string
	rd       *ipc.Reader
	i        int
	mem      *arrowfix.Scope
	recycle  *pqread.Recycler
	released bool
}

func openIPCStream(r io.Reader, name string, opts ReadOptions) (source, error) {
	tune := opts.tuning()
	mr := arrowfix.NewCheckedMessageReader(r, tune.MaxDecompressed)
	rc := pqread.NewRecycler(opts.Allocator, ipcRecycleBytes, tune.PoisonRecycled, opts.stats)
	mem := arrowfix.NewScope(rc)
	mr.Bound = mem
	rd, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(mem))
	if err != nil {
		mr.Release()
		mem.Rollback()
		rc.Close()
		return nil, fmt.Errorf("%s: corrupt arrow ipc stream: %w: %w", name, ErrFormat, err)
	}
	mem.Commit()
	return withoutViews(&ipcStreamSource{name: name, rd: rd, mem: mem, recycle: rc}, opts.Allocator), nil
}

func (s *ipcStreamSource) schema() *arrow.Schema { return s.rd.Schema() }
func (s *ipcStreamSource) numRows() int64        { return -1 }

func (s *ipcStreamSource) next() (arrow.Record, error) {
	if s.released {
		return nil, fmt.Errorf("%s: arrow ipc stream read after an error: %w", s.name, ErrFormat)
	}
	rec, err := failOnPanic(s.fail, s.rd.Read)
	if err != nil {
		if errors.Is(err, io.EOF) {
			s.recycle.Close() // nothing will take the kept buffers
			return nil, io.EOF
		}
		s.fail()
		return nil, fmt.Errorf("%s: corrupt arrow ipc stream at batch %d: %w: %w", s.name, s.i, ErrFormat, err)
	}
	if rec == nil { // defensive: Read returns nil only with an error
		return nil, io.EOF
	}
	s.i++
	if err := validateRecord(rec); err != nil {
		s.fail()
		return nil, fmt.Errorf("%s: corrupt arrow ipc stream at batch %d: %w: %w", s.name, s.i-1, ErrFormat, err)
	}
	rec.Retain() // the ipc.Reader releases it on the next Read
	s.mem.Commit()
	return rec, nil
}

// fail releases the reader after a batch failed to decode and frees what
// the decoder leaked (see scope).
func (s *ipcStreamSource) fail() {
	if !s.released {
		s.released = true
		s.rd.Release()
		s.mem.Rollback()
		s.recycle.Close()
	}
}

func (s *ipcStreamSource) close() error {
	if !s.released {
		s.released = true
		s.rd.Release()
		s.recycle.Close()
	}
	return nil
}
