//go:build cgo

// One translation unit of the vendored zlib inflater (see zlib/README.pate.md),
// its symbols prefixed (z_...) so that they cannot clash with another zlib.

#define Z_PREFIX
#include "zlib/inftrees.c"
