//go:build !cgo

package fastcodec

import "io"

// GzipReader is not available without cgo.
type GzipReader struct{}

// NewGzipReader reports false: without cgo the Go decoder does the work.
func NewGzipReader(r io.Reader) (*GzipReader, bool) { return nil, false }

func (*GzipReader) Read([]byte) (int, error) { return 0, io.EOF }

// Close does nothing.
func (*GzipReader) Close() error { return nil }
