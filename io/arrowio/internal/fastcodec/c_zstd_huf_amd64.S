//go:build cgo

// zstd's x86-64 Huffman decoding loops (BMI2, chosen at run time), from
// the vendored tree; see zstd/README.pate.md.

#include "zstd/lib/decompress/huf_decompress_amd64.S"
