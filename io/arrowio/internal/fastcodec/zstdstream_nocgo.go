//go:build !cgo

package fastcodec

import (
	"bufio"
	"io"
)

// ZstdStreamWindowLog is the largest window (1<<23, 8 MiB) a streamed
// zstd frame may ask for.
const ZstdStreamWindowLog = 23

// ZstdReader is not available without cgo.
type ZstdReader struct{}

// NewZstdReader reports false: without cgo the Go decoder does the work.
func NewZstdReader(r io.Reader) (*ZstdReader, bool) { return nil, false }

func (*ZstdReader) Read([]byte) (int, error) { return 0, io.EOF }

// Close does nothing.
func (*ZstdReader) Close() error { return nil }

// DecodeZstdInto reports false: without cgo the caller streams the page.
func DecodeZstdInto(br *bufio.Reader, dst []byte) bool { return false }
