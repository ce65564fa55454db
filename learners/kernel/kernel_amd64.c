//go:build cgo && amd64

// Fused vote kernels for k stacked linear teachers. Teachers are packed in
// groups of 16: weight of teacher (16g+l), packed class c, feature j is
// wp[((g*pc + c)*dim + j)*16 + l] and its bias bp[(g*pc + c)*16 + l]; padded
// teachers have zero weights and biases. For each block of R rows and one or
// two groups, the scores stay in registers and are turned into votes at once.
//
// Every function carries its own target attribute, so this file is compiled
// without -mavx2 and the binary still runs on CPUs without AVX2 (pate_votes
// is only called with a level that pate_cpu_level reported).

#include <immintrin.h>
#include <stdint.h>
#include "kernel_amd64.h"

#define AI static inline __attribute__((always_inline))

// XAT is feature j of row r of x: row-major (n × dim) when ld is 0,
// column-major with leading dimension ld otherwise. The kernels are inlined
// into one copy per layout, where ld or the row stride is known.
#define XAT(x, r, j) ((x)[ld ? (int64_t)(j) * ld + (r) : (int64_t)(r) * dim + (j)])
#define T512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,popcnt")))
#define T256 __attribute__((target("avx2,fma,popcnt")))

int pate_cpu_level(void) {
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("fma") && __builtin_cpu_supports("popcnt"))
		return PATE_ISA_AVX512;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("popcnt"))
		return PATE_ISA_AVX2;
	return 0;
}

/* ---------------------------------------------------------------- AVX-512 */

#define R512 12 /* rows per block: 2 groups × 12 rows = 24 accumulators */

// bin512 adds to ones[r] the number of teachers in V groups (V = 1 or 2)
// whose difference score on row r is > 0.
T512 AI void bin512(const float *wp, const float *bp, int64_t dim, const float *x, const int64_t ld, const int R,
                    const int V, int32_t *ones) {
	__m512 acc[2][R512];
	const float *w1 = wp + dim * 16;
#pragma GCC unroll 16
	for (int r = 0; r < R; r++) {
		acc[0][r] = _mm512_loadu_ps(bp);
		if (V == 2) acc[1][r] = _mm512_loadu_ps(bp + 16);
	}
	for (int64_t j = 0; j < dim; j++) {
		__m512 a = _mm512_load_ps(wp + j * 16);
		__m512 b = V == 2 ? _mm512_load_ps(w1 + j * 16) : a;
#pragma GCC unroll 16
		for (int r = 0; r < R; r++) {
			__m512 xv = _mm512_set1_ps(XAT(x, r, j));
			acc[0][r] = _mm512_fmadd_ps(a, xv, acc[0][r]);
			if (V == 2) acc[1][r] = _mm512_fmadd_ps(b, xv, acc[1][r]);
		}
	}
	const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 16
	for (int r = 0; r < R; r++) {
		int32_t c = __builtin_popcount(_mm512_cmp_ps_mask(acc[0][r], zero, _CMP_GT_OQ));
		if (V == 2) c += __builtin_popcount(_mm512_cmp_ps_mask(acc[1][r], zero, _CMP_GT_OQ));
		ones[r] += c;
	}
}

// mc512 adds to counts[r*classes + c] the votes of V groups on row r. The
// pc = classes−1 packed classes are scores relative to class 0, which scores 0.
T512 AI void mc512(const float *wp, const float *bp, int64_t classes, int64_t dim, const float *x, const int64_t ld,
                   const int R, const int V, int32_t *counts) {
	__m512 best[2][R512];
	__m512i idx[2][R512];
	const int64_t pc = classes - 1;
	const int64_t gstride = pc * dim * 16; // floats between consecutive groups
#pragma GCC unroll 16
	for (int r = 0; r < R; r++)
		for (int v = 0; v < V; v++) {
			best[v][r] = _mm512_setzero_ps();
			idx[v][r] = _mm512_setzero_si512();
		}
	for (int64_t c = 0; c < pc; c++) {
		__m512 acc[2][R512];
		const float *w0 = wp + c * dim * 16;
		const float *w1 = w0 + gstride;
		const float *b0 = bp + c * 16;
#pragma GCC unroll 16
		for (int r = 0; r < R; r++) {
			acc[0][r] = _mm512_loadu_ps(b0);
			if (V == 2) acc[1][r] = _mm512_loadu_ps(b0 + pc * 16);
		}
		for (int64_t j = 0; j < dim; j++) {
			__m512 a = _mm512_load_ps(w0 + j * 16);
			__m512 b = V == 2 ? _mm512_load_ps(w1 + j * 16) : a;
#pragma GCC unroll 16
			for (int r = 0; r < R; r++) {
				__m512 xv = _mm512_set1_ps(XAT(x, r, j));
				acc[0][r] = _mm512_fmadd_ps(a, xv, acc[0][r]);
				if (V == 2) acc[1][r] = _mm512_fmadd_ps(b, xv, acc[1][r]);
			}
		}
		const __m512i cv = _mm512_set1_epi32((int)c + 1);
#pragma GCC unroll 16
		for (int r = 0; r < R; r++)
			for (int v = 0; v < V; v++) {
				__mmask16 m = _mm512_cmp_ps_mask(acc[v][r], best[v][r], _CMP_GT_OQ);
				best[v][r] = _mm512_mask_mov_ps(best[v][r], m, acc[v][r]);
				idx[v][r] = _mm512_mask_mov_epi32(idx[v][r], m, cv);
			}
	}
	for (int64_t c = 0; c < classes; c++) {
		const __m512i cv = _mm512_set1_epi32((int)c);
#pragma GCC unroll 16
		for (int r = 0; r < R; r++) {
			int32_t s = 0;
			for (int v = 0; v < V; v++) s += __builtin_popcount(_mm512_cmpeq_epi32_mask(idx[v][r], cv));
			counts[r * classes + c] += s;
		}
	}
}

#define ROWCASES(CALL)                                                                                                 \
	switch (R) {                                                                                                   \
	case 12: CALL(12); break;                                                                                      \
	case 11: CALL(11); break;                                                                                      \
	case 10: CALL(10); break;                                                                                      \
	case 9: CALL(9); break;                                                                                        \
	case 8: CALL(8); break;                                                                                        \
	case 7: CALL(7); break;                                                                                        \
	case 6: CALL(6); break;                                                                                        \
	case 5: CALL(5); break;                                                                                        \
	case 4: CALL(4); break;                                                                                        \
	case 3: CALL(3); break;                                                                                        \
	case 2: CALL(2); break;                                                                                        \
	default: CALL(1); break;                                                                                       \
	}

T512 AI void votes512(const float *wp, const float *bp, int64_t groups, int64_t k, int64_t classes, int64_t pc,
                      int64_t dim, const float *x, const int64_t ld, int64_t n, int32_t *counts) {
	const int64_t pad = groups * 16 - k;
	for (int64_t i = 0; i < n; i += R512) {
		const int R = (int)(n - i < R512 ? n - i : R512);
		const float *xb = ld ? x + i : x + i * dim;
		int32_t *cb = counts + i * classes;
		if (pc == 1) {
			int32_t ones[R512] = {0};
			int64_t g = 0;
			for (; g + 2 <= groups; g += 2) {
				const float *w = wp + g * dim * 16, *b = bp + g * 16;
#define BIN2(RR) bin512(w, b, dim, xb, ld, RR, 2, ones)
				ROWCASES(BIN2)
			}
			if (g < groups) {
				const float *w = wp + g * dim * 16, *b = bp + g * 16;
#define BIN1(RR) bin512(w, b, dim, xb, ld, RR, 1, ones)
				ROWCASES(BIN1)
			}
			for (int r = 0; r < R; r++) {
				cb[2 * r] = (int32_t)k - ones[r];
				cb[2 * r + 1] = ones[r];
			}
			continue;
		}
		for (int64_t q = 0; q < (int64_t)R * classes; q++) cb[q] = 0;
		int64_t g = 0;
		for (; g + 2 <= groups; g += 2) {
			const float *w = wp + g * pc * dim * 16, *b = bp + g * pc * 16;
#define MC2(RR) mc512(w, b, classes, dim, xb, ld, RR, 2, cb)
			ROWCASES(MC2)
		}
		if (g < groups) {
			const float *w = wp + g * pc * dim * 16, *b = bp + g * pc * 16;
#define MC1(RR) mc512(w, b, classes, dim, xb, ld, RR, 1, cb)
			ROWCASES(MC1)
		}
		for (int r = 0; r < R; r++) cb[r * classes] -= (int32_t)pad; // padded teachers all vote class 0
	}
}

/* ------------------------------------------------------------------- AVX2 */

#define R256 6 /* rows per block: 1 group (2 × 8 lanes) × 6 rows = 12 accumulators */

T256 AI int32_t gt0count256(__m256 v, __m256 zero) {
	return __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_cmp_ps(v, zero, _CMP_GT_OQ)));
}

T256 AI void bin256(const float *wp, const float *bp, int64_t dim, const float *x, const int64_t ld, const int R,
                    int32_t *ones) {
	__m256 lo[R256], hi[R256];
#pragma GCC unroll 8
	for (int r = 0; r < R; r++) {
		lo[r] = _mm256_loadu_ps(bp);
		hi[r] = _mm256_loadu_ps(bp + 8);
	}
	for (int64_t j = 0; j < dim; j++) {
		__m256 a = _mm256_load_ps(wp + j * 16);
		__m256 b = _mm256_load_ps(wp + j * 16 + 8);
#pragma GCC unroll 8
		for (int r = 0; r < R; r++) {
			__m256 xv = _mm256_broadcast_ss(&XAT(x, r, j));
			lo[r] = _mm256_fmadd_ps(a, xv, lo[r]);
			hi[r] = _mm256_fmadd_ps(b, xv, hi[r]);
		}
	}
	const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 8
	for (int r = 0; r < R; r++) ones[r] += gt0count256(lo[r], zero) + gt0count256(hi[r], zero);
}

T256 AI void mc256(const float *wp, const float *bp, int64_t classes, int64_t dim, const float *x, const int64_t ld,
                   const int R, int32_t *counts) {
	__m256 best[2][R256];
	__m256i idx[2][R256];
	const int64_t pc = classes - 1;
#pragma GCC unroll 8
	for (int r = 0; r < R; r++) {
		best[0][r] = best[1][r] = _mm256_setzero_ps();
		idx[0][r] = idx[1][r] = _mm256_setzero_si256();
	}
	for (int64_t c = 0; c < pc; c++) {
		__m256 lo[R256], hi[R256];
		const float *w = wp + c * dim * 16;
#pragma GCC unroll 8
		for (int r = 0; r < R; r++) {
			lo[r] = _mm256_loadu_ps(bp + c * 16);
			hi[r] = _mm256_loadu_ps(bp + c * 16 + 8);
		}
		for (int64_t j = 0; j < dim; j++) {
			__m256 a = _mm256_load_ps(w + j * 16);
			__m256 b = _mm256_load_ps(w + j * 16 + 8);
#pragma GCC unroll 8
			for (int r = 0; r < R; r++) {
				__m256 xv = _mm256_broadcast_ss(&XAT(x, r, j));
				lo[r] = _mm256_fmadd_ps(a, xv, lo[r]);
				hi[r] = _mm256_fmadd_ps(b, xv, hi[r]);
			}
		}
		{
			const __m256i cv = _mm256_set1_epi32((int)c + 1);
#pragma GCC unroll 8
			for (int r = 0; r < R; r++) {
				__m256 m0 = _mm256_cmp_ps(lo[r], best[0][r], _CMP_GT_OQ);
				__m256 m1 = _mm256_cmp_ps(hi[r], best[1][r], _CMP_GT_OQ);
				best[0][r] = _mm256_blendv_ps(best[0][r], lo[r], m0);
				best[1][r] = _mm256_blendv_ps(best[1][r], hi[r], m1);
				idx[0][r] = _mm256_castps_si256(
				    _mm256_blendv_ps(_mm256_castsi256_ps(idx[0][r]), _mm256_castsi256_ps(cv), m0));
				idx[1][r] = _mm256_castps_si256(
				    _mm256_blendv_ps(_mm256_castsi256_ps(idx[1][r]), _mm256_castsi256_ps(cv), m1));
			}
		}
	}
	for (int64_t c = 0; c < classes; c++) {
		const __m256i cv = _mm256_set1_epi32((int)c);
#pragma GCC unroll 8
		for (int r = 0; r < R; r++) {
			unsigned m0 = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(idx[0][r], cv)));
			unsigned m1 = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(idx[1][r], cv)));
			counts[r * classes + c] += __builtin_popcount(m0) + __builtin_popcount(m1);
		}
	}
}

#define ROWCASES6(CALL)                                                                                                \
	switch (R) {                                                                                                   \
	case 6: CALL(6); break;                                                                                        \
	case 5: CALL(5); break;                                                                                        \
	case 4: CALL(4); break;                                                                                        \
	case 3: CALL(3); break;                                                                                        \
	case 2: CALL(2); break;                                                                                        \
	default: CALL(1); break;                                                                                       \
	}

T256 AI void votes256(const float *wp, const float *bp, int64_t groups, int64_t k, int64_t classes, int64_t pc,
                      int64_t dim, const float *x, const int64_t ld, int64_t n, int32_t *counts) {
	const int64_t pad = groups * 16 - k;
	for (int64_t i = 0; i < n; i += R256) {
		const int R = (int)(n - i < R256 ? n - i : R256);
		const float *xb = ld ? x + i : x + i * dim;
		int32_t *cb = counts + i * classes;
		if (pc == 1) {
			int32_t ones[R256] = {0};
			for (int64_t g = 0; g < groups; g++) {
				const float *w = wp + g * dim * 16, *b = bp + g * 16;
#define BIN256(RR) bin256(w, b, dim, xb, ld, RR, ones)
				ROWCASES6(BIN256)
			}
			for (int r = 0; r < R; r++) {
				cb[2 * r] = (int32_t)k - ones[r];
				cb[2 * r + 1] = ones[r];
			}
			continue;
		}
		for (int64_t q = 0; q < (int64_t)R * classes; q++) cb[q] = 0;
		for (int64_t g = 0; g < groups; g++) {
			const float *w = wp + g * pc * dim * 16, *b = bp + g * pc * 16;
#define MC256(RR) mc256(w, b, classes, dim, xb, ld, RR, cb)
			ROWCASES6(MC256)
		}
		for (int r = 0; r < R; r++) cb[r * classes] -= (int32_t)pad;
	}
}

// Each layout gets its own copy of the kernels, with the stride of the other
// layout a constant zero: ld = 0 is row-major x (n × dim), ld > 0 column-major
// (x[j*ld + r]).
T512 static void votes512rm(const float *wp, const float *bp, int64_t groups, int64_t k, int64_t classes, int64_t pc,
                            int64_t dim, const float *x, int64_t n, int32_t *counts) {
	votes512(wp, bp, groups, k, classes, pc, dim, x, 0, n, counts);
}
T512 static void votes512cm(const float *wp, const float *bp, int64_t groups, int64_t k, int64_t classes, int64_t pc,
                            int64_t dim, const float *x, int64_t ld, int64_t n, int32_t *counts) {
	if (ld <= 0) __builtin_unreachable(); // folds XAT to the column-major form
	votes512(wp, bp, groups, k, classes, pc, dim, x, ld, n, counts);
}
T256 static void votes256rm(const float *wp, const float *bp, int64_t groups, int64_t k, int64_t classes, int64_t pc,
                            int64_t dim, const float *x, int64_t n, int32_t *counts) {
	votes256(wp, bp, groups, k, classes, pc, dim, x, 0, n, counts);
}
T256 static void votes256cm(const float *wp, const float *bp, int64_t groups, int64_t k, int64_t classes, int64_t pc,
                            int64_t dim, const float *x, int64_t ld, int64_t n, int32_t *counts) {
	if (ld <= 0) __builtin_unreachable(); // folds XAT to the column-major form
	votes256(wp, bp, groups, k, classes, pc, dim, x, ld, n, counts);
}

void pate_votes(int level, const float *wp, const float *bp, int64_t groups, int64_t k, int64_t classes, int64_t pc,
                int64_t dim, const float *x, int64_t ld, int64_t n, int32_t *counts) {
	if (level >= PATE_ISA_AVX512) {
		if (ld)
			votes512cm(wp, bp, groups, k, classes, pc, dim, x, ld, n, counts);
		else
			votes512rm(wp, bp, groups, k, classes, pc, dim, x, n, counts);
	} else {
		if (ld)
			votes256cm(wp, bp, groups, k, classes, pc, dim, x, ld, n, counts);
		else
			votes256rm(wp, bp, groups, k, classes, pc, dim, x, n, counts);
	}
}
