package arrowio

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
)

// magicGzip starts every gzip member (RFC 1952: ID1, ID2).
var magicGzip = []byte{0x1f, 0x8b}

// isGzip reports whether head starts like gzip-compressed data, whatever
// the file is called.
func isGzip(head []byte) bool { return bytes.HasPrefix(head, magicGzip) }

// gunzip makes the Reader read in through a gzip decompressor, and returns
// the decompressed stream and its first bytes (up to sniffLen).
func (r *Reader) gunzip(in io.Reader) (*bufio.Reader, []byte, error) {
	gz, err := gzip.NewReader(in)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: corrupt gzip input: %w: %w", r.name, ErrFormat, err)
	}
	r.gz = gz
	br := bufio.NewReaderSize(gz, 1<<16)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, nil, fmt.Errorf("%s: corrupt gzip input: %w: %w", r.name, ErrFormat, err)
	}
	return br, head, nil
}

// checkCompressed refuses a compressed file of a format that needs random
// access: a decompressed stream cannot be read from its end.
func (r *Reader) checkCompressed() error {
	if r.gz != nil && (r.format == FormatParquet || r.format == FormatIPCFile) {
		return fmt.Errorf("%s: a gzip-compressed %s cannot be read: decompress it first (Parquet and Arrow files compress their pages or buffers themselves): %w", r.name, r.format, ErrFormat)
	}
	return nil
}

// OpenText opens the file at path for reading its bytes as they are
// meant to be read: through a decompressor when it is gzip-compressed
// (told by its magic bytes), else as they are. For callers that read a CSV
// file as text (the ledger's identity of a CSV input).
func OpenText(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	in, err := TextReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{in, f}, nil
}

// TextReader returns in's bytes as they are meant to be read: through a
// decompressor when they are gzip-compressed, else as they are.
func TextReader(in io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(in, 1<<16)
	head, _ := br.Peek(len(magicGzip))
	if !isGzip(head) {
		return br, nil
	}
	gz, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("corrupt gzip input: %w: %w", ErrFormat, err)
	}
	return gz, nil
}

// SniffFile tells the format of the file at path as Open would read it:
// that of the decompressed bytes of a gzip file.
func SniffFile(path string) (Format, error) {
	in, err := OpenText(path)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(in, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return SniffFormat(head[:n], path)
}

// countCSVRows counts the records of the CSV file at path after its
// header, as the CSV reader (without declared types) reads them: blank
// lines are no records, a quoted field may span lines. A record of the
// wrong width still counts; reading it fails later.
func countCSVRows(path string) (int64, error) {
	in, err := OpenText(path)
	if err != nil {
		return -1, err
	}
	defer in.Close()
	r := csv.NewReader(in)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	var n int64
	for {
		_, err := r.Read()
		if errors.Is(err, io.EOF) {
			return max(n-1, 0), nil
		}
		if err != nil {
			return -1, err
		}
		n++
	}
}
