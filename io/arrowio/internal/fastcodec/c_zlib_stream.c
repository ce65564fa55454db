//go:build cgo

// Streaming gzip inflation with the vendored zlib, for pages too large to
// decode whole (libdeflate cannot stream).

#define Z_PREFIX
#include <stdlib.h>
#include "zlib/zlib.h"
#include "fastcodec.h"

void *pate_inflate_new(void) {
	z_stream *s = calloc(1, sizeof *s);
	if (s == NULL) {
		return NULL;
	}
	if (inflateInit2(s, 15 + 16) != Z_OK) { // one gzip member
		free(s);
		return NULL;
	}
	return s;
}

void pate_inflate_reset(void *s) { inflateReset((z_stream *)s); }

void pate_inflate_free(void *s) {
	inflateEnd((z_stream *)s);
	free(s);
}

// pate_inflate_read inflates from in[:in_size] into out[:out_size] and
// says how much of each it used; it returns 0 at the end of the member, 1
// within it, -1 on an error. No pointer to in or out is kept after it
// returns.
int pate_inflate_read(void *s, const void *in, size_t in_size, size_t *in_used, void *out, size_t out_size, size_t *out_used) {
	z_stream *z = (z_stream *)s;
	int r;
	if (in_size > (1u << 30)) {
		in_size = 1u << 30;
	}
	if (out_size > (1u << 30)) {
		out_size = 1u << 30;
	}
	z->next_in = (Bytef *)in;
	z->avail_in = (uInt)in_size;
	z->next_out = (Bytef *)out;
	z->avail_out = (uInt)out_size;
	r = inflate(z, Z_NO_FLUSH);
	*in_used = in_size - z->avail_in;
	*out_used = out_size - z->avail_out;
	z->next_in = Z_NULL;
	z->next_out = Z_NULL;
	z->avail_in = 0;
	z->avail_out = 0;
	if (r == Z_STREAM_END) {
		return 0;
	}
	if (r == Z_OK || r == Z_BUF_ERROR) {
		return 1;
	}
	return -1;
}
