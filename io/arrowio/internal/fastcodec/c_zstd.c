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

void *pate_zstds_new(int window_log_max) {
	ZSTD_DCtx *d = ZSTD_createDCtx();
	if (d != NULL && ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, window_log_max))) {
		ZSTD_freeDCtx(d);
		return NULL;
	}
	return d;
}

// pate_zstds_new_stable is pate_zstds_new for a decoder that writes a
// frame straight into one output buffer, the same at every call
// (ZSTD_d_stableOutBuffer): no window buffer, no copy out of it.
void *pate_zstds_new_stable(int window_log_max) {
	ZSTD_DCtx *d = pate_zstds_new(window_log_max);
	if (d != NULL && ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_stableOutBuffer, 1))) {
		ZSTD_freeDCtx(d);
		return NULL;
	}
	return d;
}

void pate_zstds_reset(void *d) { ZSTD_DCtx_reset((ZSTD_DCtx *)d, ZSTD_reset_session_only); }

// pate_zstds_read decodes from in[*in_pos:in_size] into out[*out_pos:out_size]
// and moves both positions; it returns 0 at the end of a frame, 1 within
// one, -1 on an error. No pointer to in or out is kept after it returns.
int pate_zstds_read(void *d, const void *in, size_t in_size, size_t *in_pos, void *out, size_t out_size, size_t *out_pos) {
	ZSTD_inBuffer i = {in, in_size, *in_pos};
	ZSTD_outBuffer o = {out, out_size, *out_pos};
	size_t r = ZSTD_decompressStream((ZSTD_DCtx *)d, &o, &i);
	*in_pos = i.pos;
	*out_pos = o.pos;
	if (ZSTD_isError(r)) {
		return -1;
	}
	return r == 0 ? 0 : 1;
}

void pate_zstds_free(void *d) { ZSTD_freeDCtx((ZSTD_DCtx *)d); }
