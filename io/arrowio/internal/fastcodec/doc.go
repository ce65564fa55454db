// Package fastcodec decodes the gzip, zlib, zstd and brotli blocks of
// Parquet pages with the C decoders of libdeflate, zstd and brotli, and
// streams of zstd (libzstd) and gzip (zlib's inflater) for pages too
// large to decode whole, all vendored under this directory (decompression
// sources only; each tree has its licence and a README.pate.md saying
// where it came from). Per
// core they decode a page of float64s 1.6x (zstd) to 2.5x (gzip) as fast
// as the Go decoders Arrow uses (BenchmarkDecode), and decompression is
// most of the time a compressed layout takes to read.
//
// Without cgo (CGO_ENABLED=0, or no C compiler found) the decoders report
// that they are not available and Wrap's codecs are Arrow's own.
//
// The decoders are strict: they succeed only on input that decodes
// cleanly and exactly into the caller's buffer, and leave everything else
// (corrupt, truncated, trailing bytes, a different length) to the Go
// decoder, so behaviour on odd input is the Go decoder's.
package fastcodec
