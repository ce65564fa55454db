//go:build cgo

// One translation unit of the vendored brotli decoder (see brotli/README.pate.md).

#include "brotli/c/common/platform.c"
