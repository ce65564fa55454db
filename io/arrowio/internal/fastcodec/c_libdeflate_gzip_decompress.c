//go:build cgo

// One translation unit of the vendored libdeflate (see libdeflate/README.pate.md).

#include "libdeflate/lib/gzip_decompress.c"
