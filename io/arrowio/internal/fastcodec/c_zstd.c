//go:build cgo

// The vendored zstd decoder (see zstd/README.pate.md) as one translation
// unit, with the settings of upstream's single-file decoder
// (build/single_file_libs/zstddeclib-in.c) except that the x86-64 Huffman
// loops in assembly stay in (c_zstd_huf_amd64.S).

#define DEBUGLEVEL 0
#define MEM_MODULE
#undef XXH_NAMESPACE
#define XXH_NAMESPACE ZSTD_
#undef XXH_PRIVATE_API
#define XXH_PRIVATE_API
#undef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#define ZSTD_LEGACY_SUPPORT 0
#define ZSTD_STRIP_ERROR_STRINGS
#define ZSTD_TRACE 0

#define ZSTD_DEPS_NEED_MALLOC
#include "zstd/lib/common/zstd_deps.h"

#include "zstd/lib/common/debug.c"
#include "zstd/lib/common/entropy_common.c"
#include "zstd/lib/common/error_private.c"
#include "zstd/lib/common/fse_decompress.c"
#include "zstd/lib/common/zstd_common.c"

#include "zstd/lib/decompress/huf_decompress.c"
#include "zstd/lib/decompress/zstd_ddict.c"
#include "zstd/lib/decompress/zstd_decompress.c"
#include "zstd/lib/decompress/zstd_decompress_block.c"

#include "fastcodec.h"

void *pate_zstd_new(void) { return ZSTD_createDCtx(); }

void pate_zstd_free(void *d) { ZSTD_freeDCtx((ZSTD_DCtx *)d); }

int pate_zstd_decode(void *d, const void *src, size_t n, void *dst, size_t cap, size_t *out) {
	size_t r = ZSTD_decompressDCtx((ZSTD_DCtx *)d, dst, cap, src, n);
	if (ZSTD_isError(r)) {
		return 0;
	}
	*out = r;
	return 1;
}
