package arrowio

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
)

type ipcFileSource struct {
	rows   int64 // from the footer's blocks
	name   string
	fr     *ipc.FileReader
	i      int
	mem    *scope
	closed bool
}

func openIPCFile(f *os.File, name string, opts ReadOptions) (source, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	blocks, err := checkIPCFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: corrupt arrow ipc file: %w: %w", name, ErrFormat, err)
	}
	mem := newScope(opts.Allocator)
	fr, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		mem.rollback()
		return nil, fmt.Errorf("%s: corrupt arrow ipc file: %w: %w", name, ErrFormat, err)
	}
	if fr.NumRecords() != len(blocks) {
		fr.Close()
		mem.rollback()
		return nil, fmt.Errorf("%s: corrupt arrow ipc file: %d record batches, footer lists %d: %w", name, fr.NumRecords(), len(blocks), ErrFormat)
	}
	mem.commit()
	var rows int64
	for _, b := range blocks {
		rows += b.rows
	}
	return withoutViews(&ipcFileSource{name: name, fr: fr, mem: mem, rows: rows}, opts.Allocator), nil
}

func (s *ipcFileSource) schema() *arrow.Schema { return s.fr.Schema() }

// numRows adds up the lengths the batches' metadata declare (checked
// against each batch when it is read: validateRecord).
func (s *ipcFileSource) numRows() int64 { return s.rows }

func (s *ipcFileSource) next() (arrow.Record, error) {
	if s.i >= s.fr.NumRecords() {
		return nil, io.EOF
	}
	rec, err := s.fr.RecordAt(s.i) // owned by us, unlike Record(i)
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
	s.mem.commit()
	return rec, nil
}

// fail closes the reader after a batch failed to decode and frees what
// the decoder leaked (see scope).
func (s *ipcFileSource) fail() {
	if !s.closed {
		s.closed = true
		s.fr.Close()
		s.mem.rollback()
	}
}

func (s *ipcFileSource) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.fr.Close()
}

type ipcStreamSource struct {
	name     string
	rd       *ipc.Reader
	i        int
	mem      *scope
	released bool
}

func openIPCStream(r io.Reader, name string, opts ReadOptions) (source, error) {
	mr := &checkedMessageReader{r: r, refs: 1}
	mem := newScope(opts.Allocator)
	rd, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(mem))
	if err != nil {
		mr.Release()
		mem.rollback()
		return nil, fmt.Errorf("%s: corrupt arrow ipc stream: %w: %w", name, ErrFormat, err)
	}
	mem.commit()
	return withoutViews(&ipcStreamSource{name: name, rd: rd, mem: mem}, opts.Allocator), nil
}

func (s *ipcStreamSource) schema() *arrow.Schema { return s.rd.Schema() }
func (s *ipcStreamSource) numRows() int64        { return -1 }

func (s *ipcStreamSource) next() (arrow.Record, error) {
	if s.released {
		return nil, fmt.Errorf("%s: arrow ipc stream read after an error: %w", s.name, ErrFormat)
	}
	rec, err := s.rd.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
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
	s.mem.commit()
	return rec, nil
}

// fail releases the reader after a batch failed to decode and frees what
// the decoder leaked (see scope).
func (s *ipcStreamSource) fail() {
	if !s.released {
		s.released = true
		s.rd.Release()
		s.mem.rollback()
	}
}

func (s *ipcStreamSource) close() error {
	if !s.released {
		s.released = true
		s.rd.Release()
	}
	return nil
}
