//go:build !cgo

package fastcodec

// Available says whether the C decoders are compiled in.
const Available = false

// Gzip reports false: without cgo the Go decoder does the work.
func Gzip(dst, src []byte) bool { return false }

// Zlib reports false: without cgo the Go decoder does the work.
func Zlib(dst, src []byte) bool { return false }

// Zstd reports false: without cgo the Go decoder does the work.
func Zstd(dst, src []byte) (int, bool) { return 0, false }

// Brotli reports false: without cgo the Go decoder does the work.
func Brotli(dst, src []byte) (int, bool) { return 0, false }
