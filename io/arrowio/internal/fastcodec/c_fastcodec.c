//go:build cgo

#include "fastcodec.h"
#include "libdeflate/libdeflate.h"
#include <brotli/decode.h>

void *pate_deflate_new(void) { return libdeflate_alloc_decompressor(); }

void pate_deflate_free(void *d) { libdeflate_free_decompressor((struct libdeflate_decompressor *)d); }

// pate_gzip_decode decodes gzip members laid end to end, which must use
// all of src and fill all of dst: anything else (trailing bytes, a short
// or long output) is left to the Go decoder, so that its behaviour on odd
// input is kept exactly.
int pate_gzip_decode(void *d, const void *src, size_t n, void *dst, size_t cap, size_t *out) {
	const unsigned char *in = (const unsigned char *)src;
	unsigned char *o = (unsigned char *)dst;
	size_t done = 0;
	if (n == 0) {
		return 0;
	}
	while (n > 0) {
		size_t used = 0, wrote = 0;
		enum libdeflate_result r = libdeflate_gzip_decompress_ex(
			(struct libdeflate_decompressor *)d, in, n, o + done, cap - done, &used, &wrote);
		if (r != LIBDEFLATE_SUCCESS || used == 0) {
			return 0;
		}
		in += used;
		n -= used;
		done += wrote;
	}
	if (done != cap) {
		return 0;
	}
	*out = done;
	return 1;
}

// pate_zlib_decode decodes one zlib stream, which must fill all of dst.
int pate_zlib_decode(void *d, const void *src, size_t n, void *dst, size_t cap, size_t *out) {
	size_t wrote = 0;
	enum libdeflate_result r = libdeflate_zlib_decompress(
		(struct libdeflate_decompressor *)d, src, n, dst, cap, &wrote);
	if (r != LIBDEFLATE_SUCCESS || wrote != cap) {
		return 0;
	}
	*out = wrote;
	return 1;
}

// pate_brotli_decode decodes one brotli stream, which must use all of src
// and fit in dst.
int pate_brotli_decode(const void *src, size_t n, void *dst, size_t cap, size_t *out) {
	BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
	const uint8_t *in = (const uint8_t *)src;
	uint8_t *o = (uint8_t *)dst;
	size_t avail_in = n, avail_out = cap;
	BrotliDecoderResult r;
	if (s == NULL) {
		return 0;
	}
	r = BrotliDecoderDecompressStream(s, &avail_in, &in, &avail_out, &o, NULL);
	BrotliDecoderDestroyInstance(s);
	if (r != BROTLI_DECODER_RESULT_SUCCESS || avail_in != 0) {
		return 0;
	}
	*out = cap - avail_out;
	return 1;
}
