// The C side of package fastcodec: one-shot decoders over caller-owned
// buffers. Each returns 1 on success with the decoded length in *out, 0
// when the decoder rejects the input (the Go side then falls back to the
// Go decoder, which reports the error).

#include <stddef.h>

void *pate_deflate_new(void);
void pate_deflate_free(void *d);
int pate_gzip_decode(void *d, const void *src, size_t n, void *dst, size_t cap, size_t *out);
int pate_zlib_decode(void *d, const void *src, size_t n, void *dst, size_t cap, size_t *out);

void *pate_zstd_new(void);
void pate_zstd_free(void *d);
int pate_zstd_decode(void *d, const void *src, size_t n, void *dst, size_t cap, size_t *out);

int pate_brotli_decode(const void *src, size_t n, void *dst, size_t cap, size_t *out);

void *pate_zstds_new(int window_log_max);
void *pate_zstds_new_stable(int window_log_max);
void pate_zstds_reset(void *d);
int pate_zstds_read(void *d, const void *in, size_t in_size, size_t *in_pos, void *out, size_t out_size, size_t *out_pos);
void pate_zstds_free(void *d);

void *pate_inflate_new(void);
void pate_inflate_reset(void *s);
void pate_inflate_free(void *s);
int pate_inflate_read(void *s, const void *in, size_t in_size, size_t *in_used, void *out, size_t out_size, size_t *out_used);
