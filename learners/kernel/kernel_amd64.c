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
#include <math.h>
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
// pc = classes−1 packed classes are scores relative to each teacher's
// reference class rp[lane] (rp + 16 for the second group), which scores 0.
T512 AI void mc512(const float *wp, const float *bp, const int32_t *rp, int64_t classes, int64_t dim, const float *x,
                   const int64_t ld, const int R, const int V, int32_t *counts) {
	__m512 best[2][R512];
	__m512i idx[2][R512];
	const int64_t pc = classes - 1;
	const int64_t gstride = pc * dim * 16; // floats between consecutive groups
#pragma GCC unroll 16
	for (int r = 0; r < R; r++)
		for (int v = 0; v < V; v++) {
			best[v][r] = _mm512_setzero_ps();
			idx[v][r] = _mm512_loadu_si512(rp + v * 16);
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

T512 AI void votes512(const float *wp, const float *bp, const int32_t *rp, int64_t groups, int64_t k, int64_t classes,
                      int64_t pc, int64_t dim, const float *x, const int64_t ld, int64_t n, int32_t *counts) {
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
			const int32_t *ri = rp + g * 16;
#define MC2(RR) mc512(w, b, ri, classes, dim, xb, ld, RR, 2, cb)
			ROWCASES(MC2)
		}
		if (g < groups) {
			const float *w = wp + g * pc * dim * 16, *b = bp + g * pc * 16;
			const int32_t *ri = rp + g * 16;
#define MC1(RR) mc512(w, b, ri, classes, dim, xb, ld, RR, 1, cb)
			ROWCASES(MC1)
		}
		for (int r = 0; r < R; r++) cb[r * classes] -= (int32_t)pad; // padded teachers all vote class 0
	}
}

/* ------------------------------------------- AVX-512 column-major tiles */

// transpose16 transposes the 16 × 16 block in v (v[c] lane r becomes v[r]
// lane c).
T512 AI void transpose16(__m512 *v) {
	__m512 t[16];
	for (int q = 0; q < 16; q += 2) {
		t[q] = _mm512_unpacklo_ps(v[q], v[q + 1]);
		t[q + 1] = _mm512_unpackhi_ps(v[q], v[q + 1]);
	}
	for (int q = 0; q < 16; q += 4) {
		v[q] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[q]), _mm512_castps_pd(t[q + 2])));
		v[q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[q]), _mm512_castps_pd(t[q + 2])));
		v[q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[q + 1]), _mm512_castps_pd(t[q + 3])));
		v[q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[q + 1]), _mm512_castps_pd(t[q + 3])));
	}
	for (int q = 0; q < 16; q += 8)
		for (int u = 0; u < 4; u++) {
			t[q + u] = _mm512_shuffle_f32x4(v[q + u], v[q + u + 4], 0x88);
			t[q + u + 4] = _mm512_shuffle_f32x4(v[q + u], v[q + u + 4], 0xdd);
		}
	for (int u = 0; u < 8; u++) {
		v[u] = _mm512_shuffle_f32x4(t[u], t[u + 8], 0x88);
		v[u + 8] = _mm512_shuffle_f32x4(t[u], t[u + 8], 0xdd);
	}
}

// transpose12 copies R <= 16 rows of column-major x (feature j of row r at
// x[j*ld + r]) to row-major xt (R × dim), 16 features at a time.
T512 static void transpose12(const float *x, int64_t ld, int64_t dim, int R, float *xt) {
	const __mmask16 rows = (__mmask16)((1u << R) - 1);
	for (int64_t j0 = 0; j0 < dim; j0 += 16) {
		const int w = (int)(dim - j0 < 16 ? dim - j0 : 16);
		__m512 v[16];
		for (int c = 0; c < 16; c++)
			v[c] = c < w ? _mm512_maskz_loadu_ps(rows, x + (j0 + c) * ld) : _mm512_setzero_ps();
		transpose16(v);
		const __mmask16 cols = (__mmask16)((1u << w) - 1);
		for (int r = 0; r < R; r++) _mm512_mask_storeu_ps(xt + r * dim + j0, cols, v[r]);
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

// mc256 is mc512 on AVX2 for one group (two registers of 8 teachers).
T256 AI void mc256(const float *wp, const float *bp, const int32_t *rp, int64_t classes, int64_t dim, const float *x,
                   const int64_t ld, const int R, int32_t *counts) {
	__m256 best[2][R256];
	__m256i idx[2][R256];
	const int64_t pc = classes - 1;
	const __m256i r0 = _mm256_loadu_si256((const __m256i *)rp), r1 = _mm256_loadu_si256((const __m256i *)(rp + 8));
#pragma GCC unroll 8
	for (int r = 0; r < R; r++) {
		best[0][r] = best[1][r] = _mm256_setzero_ps();
		idx[0][r] = r0;
		idx[1][r] = r1;
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

T256 AI void votes256(const float *wp, const float *bp, const int32_t *rp, int64_t groups, int64_t k, int64_t classes,
                      int64_t pc, int64_t dim, const float *x, const int64_t ld, int64_t n, int32_t *counts) {
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
			const int32_t *ri = rp + g * 16;
#define MC256(RR) mc256(w, b, ri, classes, dim, xb, ld, RR, cb)
			ROWCASES6(MC256)
		}
		for (int r = 0; r < R; r++) cb[r * classes] -= (int32_t)pad;
	}
}

/* ------------------------------------------------ AVX2 int16, two classes */

// With two classes on AVX2 the scores are first computed exactly, in 32-bit
// integers, from 16-bit copies of the weights and rows (vpmaddwd: twice the
// multiply-adds per instruction of vfmadd, half the bytes loaded per
// multiply-add; see doc.go for what that gains), and each is certified
// against a bound T on its distance from the float32 score: a teacher whose
// |integer score| > T votes its sign, which is the sign of the exact score
// and of any float32 sum of it; the others (and every padded teacher, NaN,
// Inf, huge or tiny row) are rescored in float32 by rescore256. A teacher's weights and a row are scaled by powers of two,
// 2^et and 2^er, so that their largest magnitude is below 2^bq, and rounded
// to integers (q = round(v·2^e), ties to even), with bq chosen per dim (pack.go) so that no sum of dim
// products of |q| <= 2^bq overflows 32 bits. The score estimate is then
// exactly ŵ·x̂ + b for ŵ = qw·2^-et, x̂ = qx·2^-er, up to the rounding of its
// conversion to float32. With w the teacher's difference weights, γ = G
// (see pack.go) and c the conversion's slack,
//   T = ‖x̂‖·(‖ŵ−w‖ + γ‖w‖ + c‖ŵ‖) + ‖x̂−x‖·(‖ŵ−w‖ + ‖ŵ‖ + γ‖w‖) + (γ+c)|b| + A
// (|w·x − ŵ·x̂| <= ‖w−ŵ‖·‖x‖ + ‖ŵ‖·‖x−x̂‖ by Cauchy–Schwarz, ‖x‖ <= ‖x̂‖+‖x̂−x‖,
// plus the recursive-summation bound of a float32 score); pack.go stores
// the three per-teacher factors p1, p2, p0 and the scales sw = 2^-et.

#define RI 6 /* rows per block: 1 group (2 × 8 lanes) × 6 rows = 12 accumulators */

// dots256 sets s[u] = b[u] + Σ w[u][j]·x[j] in float32 for T <= 4 teachers
// at once, so each load of x serves T of them. Each teacher sums with the
// same two 8-lane accumulators and the same final reduction whatever T is,
// so a score does not depend on which teachers it is computed with, nor on
// the layout x came from.
T256 AI void dots256(const float *const *w, const float *x, int64_t dim, const float *b, const int T, float *s) {
	__m256 a0[4], a1[4];
	for (int u = 0; u < T; u++) a0[u] = a1[u] = _mm256_setzero_ps();
	int64_t j = 0;
	for (; j + 16 <= dim; j += 16) {
		const __m256 x0 = _mm256_loadu_ps(x + j), x1 = _mm256_loadu_ps(x + j + 8);
		for (int u = 0; u < T; u++) {
			a0[u] = _mm256_fmadd_ps(_mm256_loadu_ps(w[u] + j), x0, a0[u]);
			a1[u] = _mm256_fmadd_ps(_mm256_loadu_ps(w[u] + j + 8), x1, a1[u]);
		}
	}
	float f[8];
	for (int u = 0; u < T; u++) {
		_mm256_storeu_ps(f, _mm256_add_ps(a0[u], a1[u]));
		float t = ((f[0] + f[1]) + (f[2] + f[3])) + ((f[4] + f[5]) + (f[6] + f[7]));
		for (int64_t q = j; q < dim; q++) t += w[u][q] * x[q];
		s[u] = t + b[u];
	}
}

// rescore256 returns how many of the nt teachers in list (rows of dw,
// biases db) score > 0 on the float32 row x.
T256 static int rescore256(const int32_t *list, int nt, const float *dw, const float *db, const float *x, int64_t dim) {
	int c = 0, q = 0;
	const float *w[4];
	float b[4], s[4];
	for (; q + 4 <= nt; q += 4) {
		for (int u = 0; u < 4; u++) w[u] = dw + list[q + u] * dim, b[u] = db[list[q + u]];
		dots256(w, x, dim, b, 4, s);
		c += (s[0] > 0) + (s[1] > 0) + (s[2] > 0) + (s[3] > 0);
	}
	for (; q < nt; q++) {
		w[0] = dw + list[q] * dim, b[0] = db[list[q]];
		dots256(w, x, dim, b, 1, s);
		c += s[0] > 0;
	}
	return c;
}

// tailmask256 has lanes < left (of 8) set.
T256 AI __m256i tailmask256(int64_t left) {
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left < 8 ? left : 8)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// prefetchrows asks for the R rows of row-major x (dim values each) that
// the next block rounds, so that they arrive while this block computes.
T256 AI void prefetchrows(const float *x, int64_t dim, int64_t R) {
	const char *p = (const char *)x, *e = (const char *)(x + R * dim);
	for (; p < e; p += 64) _mm_prefetch(p, _MM_HINT_T0);
}

// qrow rounds one float32 row (dim values) to 16-bit integers q =
// round(x·2^er) in xq (room for dim rounded up to 16; the padding is
// written 0), with er such that max|x|·2^er < 2^bq, and sets *sx = 2^-er,
// *xh >= ‖x̂‖ and *dx >= ‖x̂−x‖ (x̂ = q·2^-er). A row that is not finite or
// whose largest magnitude is outside [2^-60, 2^50] gets q = 0 and *xh =
// +Inf, so that no score on it is certified.
T256 static void qrow(const float *x, int64_t dim, int bq, int16_t *xq, float *sx, float *xh, float *dx) {
	const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	__m256 mx = _mm256_setzero_ps(), bad = _mm256_setzero_ps();
	for (int64_t j = 0; j < dim; j += 8) {
		const __m256 v = j + 8 <= dim ? _mm256_loadu_ps(x + j) : _mm256_maskload_ps(x + j, tailmask256(dim - j));
		bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
		mx = _mm256_max_ps(mx, _mm256_and_ps(v, abs));
	}
	float f[8];
	_mm256_storeu_ps(f, mx);
	float m = 0;
	for (int u = 0; u < 8; u++) m = f[u] > m ? f[u] : m;
	const int64_t padded = (dim + 15) & ~(int64_t)15;
	if (_mm256_movemask_ps(bad) || !(m <= 0x1p50f) || (m > 0 && m < 0x1p-60f) || m == 0) {
		for (int64_t j = 0; j < padded; j++) xq[j] = 0;
		*sx = 1;
		*xh = m == 0 && !_mm256_movemask_ps(bad) ? 0 : __builtin_inff();
		*dx = 0;
		return;
	}
	int k;
	frexpf(m, &k); // m = f·2^k, 1/2 <= f < 1
	const int er = bq - k;
	const __m256 scale = _mm256_set1_ps(ldexpf(1, er));
	__m256i qq = _mm256_setzero_si256();
	__m256 dq = _mm256_setzero_ps();
	for (int64_t j = 0; j < padded; j += 16) {
		// Scaling by a power of two is exact but where the result is
		// subnormal (then off by < 2⁻¹⁴⁹, which the slack of *dx covers),
		// and so is s − q for |s| <= 2^bq (Sterbenz).
		const __m256 x0 = j + 8 <= dim ? _mm256_loadu_ps(x + j) : _mm256_maskload_ps(x + j, tailmask256(dim - j));
		const __m256 x1 = j + 16 <= dim ? _mm256_loadu_ps(x + j + 8)
		                                : _mm256_maskload_ps(x + j + 8, tailmask256(dim - j - 8));
		const __m256 s0 = _mm256_mul_ps(x0, scale), s1 = _mm256_mul_ps(x1, scale);
		const __m256i q0 = _mm256_cvtps_epi32(s0), q1 = _mm256_cvtps_epi32(s1);
		const __m256 d0 = _mm256_sub_ps(s0, _mm256_cvtepi32_ps(q0)), d1 = _mm256_sub_ps(s1, _mm256_cvtepi32_ps(q1));
		dq = _mm256_fmadd_ps(d0, d0, _mm256_fmadd_ps(d1, d1, dq));
		const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xd8); // in feature order
		qq = _mm256_add_epi32(qq, _mm256_madd_epi16(p, p));
		_mm256_storeu_si256((__m256i *)(xq + j), p);
	}
	int32_t qi[8];
	_mm256_storeu_si256((__m256i *)qi, qq);
	_mm256_storeu_ps(f, dq);
	int64_t sq = 0;
	double fd = 0;
	for (int u = 0; u < 8; u++) sq += qi[u], fd += (double)f[u];
	// Σq² is exact; each float32 lane of Σd² (|d| <= 1/2) is within
	// (dim+16)·2⁻²⁴ of its value, plus at most 2⁻¹⁴⁹ per underflowed square.
	const double up = 1.0 + (double)(dim + 64) * 0x1p-22, tiny = (double)(dim + 64) * 0x1p-140;
	const double inv = ldexp(1, -er);
	*sx = (float)inv;
	*xh = (float)(sqrt((double)sq) * inv * (1 + 0x1p-40)) * (1 + 0x1p-20f);
	*dx = (float)(sqrt(fd * up + tiny) * inv * (1 + 0x1p-40)) * (1 + 0x1p-20f);
}

// bini adds to ones[r] the certified votes for class 1 of the 16 teachers
// of one group (first teacher t0; lanes outside valid are padding) on the R
// rows whose 16-bit pairs are at xq + r*xs, and appends the teachers it
// cannot certify on row r to the list todo + r*ts (length nt[r]).
T256 AI void bini(const uint32_t *wq, const float *bp, const float *sw, const float *p0, const float *p1,
                  const float *p2, int64_t dim2, const uint32_t *xq, int64_t xs, const float *sx, const float *xh,
                  const float *dx, const int R, unsigned valid, int32_t t0, int32_t *todo, int64_t ts, int *nt,
                  int32_t *ones) {
	__m256i lo[RI], hi[RI];
#pragma GCC unroll 8
	for (int r = 0; r < R; r++) lo[r] = hi[r] = _mm256_setzero_si256();
	for (int64_t j = 0; j < dim2; j++) {
		const __m256i a = _mm256_load_si256((const __m256i *)(wq + j * 16));
		const __m256i b = _mm256_load_si256((const __m256i *)(wq + j * 16 + 8));
#pragma GCC unroll 8
		for (int r = 0; r < R; r++) {
			const __m256i xv = _mm256_set1_epi32((int)xq[r * xs + j]);
			lo[r] = _mm256_add_epi32(lo[r], _mm256_madd_epi16(a, xv));
			hi[r] = _mm256_add_epi32(hi[r], _mm256_madd_epi16(b, xv));
		}
	}
	const __m256 zero = _mm256_setzero_ps(), abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	for (int h = 0; h < 2; h++) {
		const __m256 s = _mm256_loadu_ps(sw + h * 8), bv = _mm256_loadu_ps(bp + h * 8),
		             q0 = _mm256_loadu_ps(p0 + h * 8), q1 = _mm256_loadu_ps(p1 + h * 8),
		             q2 = _mm256_loadu_ps(p2 + h * 8);
		const unsigned vh = (valid >> (8 * h)) & 0xff;
#pragma GCC unroll 8
		for (int r = 0; r < R; r++) {
			const __m256 e = _mm256_fmadd_ps(_mm256_cvtepi32_ps(h ? hi[r] : lo[r]),
			                                 _mm256_mul_ps(s, _mm256_set1_ps(sx[r])), bv);
			const __m256 t =
			    _mm256_fmadd_ps(q1, _mm256_set1_ps(xh[r]), _mm256_fmadd_ps(q2, _mm256_set1_ps(dx[r]), q0));
			const unsigned sure =
			    vh & (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(e, abs), t, _CMP_GT_OQ));
			ones[r] += __builtin_popcount(sure & (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(e, zero, _CMP_GT_OQ)));
			for (unsigned u = vh & ~sure; u; u &= u - 1) todo[r * ts + nt[r]++] = t0 + h * 8 + __builtin_ctz(u);
		}
	}
}

// votesi is votes256 for two classes on the int16 packing. Per block of RI
// rows it rounds the rows to integers, runs bini over all groups, then
// rescores row by row the teachers bini could not certify. scratch holds
// the integer rows, the lists and, for column-major x, the float32 rows
// (pate_votes_int16_scratch).
T256 AI void votesi(const uint32_t *wq, const float *bp, const float *sw, const float *p0, const float *p1,
                    const float *p2, const float *dw, const float *db, int64_t groups, int64_t k, int64_t dim, int bq,
                    const float *x, const int64_t ld, int64_t n, int32_t *counts, void *scratch) {
	const int64_t dim2 = (dim + 1) / 2, xs = ((dim + 15) & ~(int64_t)15) / 2; // 32-byte integer rows
	const int64_t ts = groups * 16;                                          // list room per row
	uint32_t *xq = (uint32_t *)scratch;
	int32_t *todo = (int32_t *)(xq + RI * xs);
	float *xt = (float *)(todo + RI * ts);
	const int64_t rem = k - (groups - 1) * 16;
	const unsigned last = rem >= 16 ? 0xffffu : (1u << rem) - 1;
	for (int64_t i = 0; i < n; i += RI) {
		const int R = (int)(n - i < RI ? n - i : RI);
		const float *xr[RI];
		float sx[RI], xh[RI], dx[RI];
		if (ld) // feature by feature: the R rows of a feature share a cache line
			for (int64_t j = 0; j < dim; j++)
				for (int r = 0; r < R; r++) xt[r * dim + j] = x[j * ld + i + r];
		for (int r = 0; r < R; r++) {
			xr[r] = ld ? xt + r * dim : x + (i + r) * dim;
			qrow(xr[r], dim, bq, (int16_t *)(xq + r * xs), &sx[r], &xh[r], &dx[r]);
		}
		if (!ld && i + RI < n) prefetchrows(x + (i + RI) * dim, dim, n - i - RI < RI ? n - i - RI : RI);
		int32_t ones[RI] = {0};
		int nt[RI] = {0};
		for (int64_t g = 0; g < groups; g++) {
			const unsigned v = g + 1 == groups ? last : 0xffffu;
#define BINI(RR)                                                                                                       \
	bini(wq + g * dim2 * 16, bp + g * 16, sw + g * 16, p0 + g * 16, p1 + g * 16, p2 + g * 16, dim2, xq, xs, sx, xh, \
	     dx, RR, v, (int32_t)(g * 16), todo, ts, nt, ones)
			ROWCASES6(BINI)
		}
		for (int r = 0; r < R; r++) ones[r] += rescore256(todo + r * ts, nt[r], dw, db, xr[r], dim);
		int32_t *cb = counts + i * 2;
		for (int r = 0; r < R; r++) {
			cb[2 * r] = (int32_t)k - ones[r];
			cb[2 * r + 1] = ones[r];
		}
	}
}

T256 static void votesirm(const uint32_t *wq, const float *bp, const float *sw, const float *p0, const float *p1,
                          const float *p2, const float *dw, const float *db, int64_t groups, int64_t k, int64_t dim,
                          int bq, const float *x, int64_t n, int32_t *counts, void *scratch) {
	votesi(wq, bp, sw, p0, p1, p2, dw, db, groups, k, dim, bq, x, 0, n, counts, scratch);
}
T256 static void votesicm(const uint32_t *wq, const float *bp, const float *sw, const float *p0, const float *p1,
                          const float *p2, const float *dw, const float *db, int64_t groups, int64_t k, int64_t dim,
                          int bq, const float *x, int64_t ld, int64_t n, int32_t *counts, void *scratch) {
	if (ld <= 0) __builtin_unreachable();
	votesi(wq, bp, sw, p0, p1, p2, dw, db, groups, k, dim, bq, x, ld, n, counts, scratch);
}

/* --------------------------------------- AVX-512 VNNI int16, two classes */

// The int16 path on AVX-512 with VNNI: vpdpwssd multiplies and adds pairs of
// 16-bit integers into 32-bit lanes in one instruction, 32 multiply-adds per
// instruction against vfmadd's 16. Rows are rounded by qrow, the bound and
// the rescoring are those of the AVX2 int16 path, blocks are R512 rows × two
// groups as in bin512.

#define TVN __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx512vnni,avx2,fma,popcnt")))

int pate_cpu_vnni(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512vnni");
}

TVN AI void bini512(const uint32_t *wq, const float *bp, const float *sw, const float *p0, const float *p1,
                    const float *p2, int64_t dim2, const uint32_t *xq, int64_t xs, const float *sx, const float *xh,
                    const float *dx, const int R, const int V, __mmask16 valid0, __mmask16 valid1, int32_t t0,
                    int32_t *todo, int64_t ts, int *nt, int32_t *ones) {
	// One variable per accumulator and vpdpwssd in assembly: with an array
	// of accumulators and the intrinsic, GCC 12 copied every accumulator
	// through other registers and the stack on each step (half the speed).
#define IZ(r) __m512i c0_##r = _mm512_setzero_si512(), c1_##r = c0_##r;
	IZ(0) IZ(1) IZ(2) IZ(3) IZ(4) IZ(5) IZ(6) IZ(7) IZ(8) IZ(9) IZ(10) IZ(11)
#undef IZ
	const uint32_t *w1 = wq + dim2 * 16;
	for (int64_t j = 0; j < dim2; j++) {
		const __m512i a = _mm512_load_si512(wq + j * 16);
		const __m512i b = V == 2 ? _mm512_load_si512(w1 + j * 16) : a;
#define DP(c, w, x) __asm__("vpdpwssd %2, %1, %0" : "+v"(c) : "v"(w), "v"(x))
#define IROW(r)                                                                                                        \
	if (R > r) {                                                                                                   \
		const __m512i xv = _mm512_set1_epi32((int)xq[(r) * xs + j]);                                           \
		DP(c0_##r, a, xv);                                                                                     \
		if (V == 2) DP(c1_##r, b, xv);                                                                         \
	}
		IROW(0) IROW(1) IROW(2) IROW(3) IROW(4) IROW(5) IROW(6) IROW(7) IROW(8) IROW(9) IROW(10) IROW(11)
#undef IROW
#undef DP
	}
	__m512i acc[2][R512];
#define IS(r) acc[0][r] = c0_##r, acc[1][r] = c1_##r;
	IS(0) IS(1) IS(2) IS(3) IS(4) IS(5) IS(6) IS(7) IS(8) IS(9) IS(10) IS(11)
#undef IS
	const __m512 zero = _mm512_setzero_ps();
	const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	for (int v = 0; v < V; v++) {
		const __m512 s = _mm512_loadu_ps(sw + v * 16), bv = _mm512_loadu_ps(bp + v * 16),
		             q0 = _mm512_loadu_ps(p0 + v * 16), q1 = _mm512_loadu_ps(p1 + v * 16),
		             q2 = _mm512_loadu_ps(p2 + v * 16);
		const __m512i tv = _mm512_add_epi32(iota, _mm512_set1_epi32(t0 + v * 16));
		const __mmask16 valid = v ? valid1 : valid0;
#pragma GCC unroll 16
		for (int r = 0; r < R; r++) {
			const __m512 e = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[v][r]), _mm512_mul_ps(s, _mm512_set1_ps(sx[r])), bv);
			const __m512 t =
			    _mm512_fmadd_ps(q1, _mm512_set1_ps(xh[r]), _mm512_fmadd_ps(q2, _mm512_set1_ps(dx[r]), q0));
			const __mmask16 sure = _mm512_mask_cmp_ps_mask(valid, _mm512_abs_ps(e), t, _CMP_GT_OQ);
			ones[r] += __builtin_popcount(_mm512_mask_cmp_ps_mask(sure, e, zero, _CMP_GT_OQ));
			const __mmask16 unsure = valid & (__mmask16)~sure;
			// vpcompressd to memory is microcoded on AMD Zen 4: compress in
			// a register and store all 16 lanes (the lists have room).
			_mm512_storeu_si512(todo + r * ts + nt[r], _mm512_maskz_compress_epi32(unsure, tv));
			nt[r] += __builtin_popcount(unsure);
		}
	}
}

// votesi512 is votesi on AVX-512 VNNI, R512 rows and two groups at a time.
TVN AI void votesi512(const uint32_t *wq, const float *bp, const float *sw, const float *p0, const float *p1,
                      const float *p2, const float *dw, const float *db, int64_t groups, int64_t k, int64_t dim,
                      int bq, const float *x, const int64_t ld, int64_t n, int32_t *counts, void *scratch) {
	const int64_t dim2 = (dim + 1) / 2, xs = ((dim + 15) & ~(int64_t)15) / 2;
	const int64_t ts = groups * 16 + 16; // list room per row, and a whole register's overrun
	uint32_t *xq = (uint32_t *)scratch;
	int32_t *todo = (int32_t *)(xq + R512 * xs);
	float *xt = (float *)(todo + R512 * ts);
	const int64_t rem = k - (groups - 1) * 16;
	const __mmask16 last = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
	for (int64_t i = 0; i < n; i += R512) {
		const int R = (int)(n - i < R512 ? n - i : R512);
		const float *xr[R512];
		float sx[R512], xh[R512], dx[R512];
		if (ld) transpose12(x + i, ld, dim, R, xt);
		for (int r = 0; r < R; r++) {
			xr[r] = ld ? xt + r * dim : x + (i + r) * dim;
			qrow(xr[r], dim, bq, (int16_t *)(xq + r * xs), &sx[r], &xh[r], &dx[r]);
		}
		if (!ld && i + R512 < n) prefetchrows(x + (i + R512) * dim, dim, n - i - R512 < R512 ? n - i - R512 : R512);
		int32_t ones[R512] = {0};
		int nt[R512] = {0};
		int64_t g = 0;
		for (; g + 2 <= groups; g += 2) {
			const __mmask16 v1 = g + 2 == groups ? last : (__mmask16)0xffff;
#define BI2(RR)                                                                                                        \
	bini512(wq + g * dim2 * 16, bp + g * 16, sw + g * 16, p0 + g * 16, p1 + g * 16, p2 + g * 16, dim2, xq, xs, sx,  \
	        xh, dx, RR, 2, 0xffff, v1, (int32_t)(g * 16), todo, ts, nt, ones)
			ROWCASES(BI2)
		}
		if (g < groups) {
#define BI1(RR)                                                                                                        \
	bini512(wq + g * dim2 * 16, bp + g * 16, sw + g * 16, p0 + g * 16, p1 + g * 16, p2 + g * 16, dim2, xq, xs, sx,  \
	        xh, dx, RR, 1, last, last, (int32_t)(g * 16), todo, ts, nt, ones)
			ROWCASES(BI1)
		}
		for (int r = 0; r < R; r++) ones[r] += rescore256(todo + r * ts, nt[r], dw, db, xr[r], dim);
		int32_t *cb = counts + i * 2;
		for (int r = 0; r < R; r++) {
			cb[2 * r] = (int32_t)k - ones[r];
			cb[2 * r + 1] = ones[r];
		}
	}
}

TVN static void votesi512rm(const uint32_t *wq, const float *bp, const float *sw, const float *p0, const float *p1,
                            const float *p2, const float *dw, const float *db, int64_t groups, int64_t k, int64_t dim,
                            int bq, const float *x, int64_t n, int32_t *counts, void *scratch) {
	votesi512(wq, bp, sw, p0, p1, p2, dw, db, groups, k, dim, bq, x, 0, n, counts, scratch);
}
TVN static void votesi512cm(const uint32_t *wq, const float *bp, const float *sw, const float *p0, const float *p1,
                            const float *p2, const float *dw, const float *db, int64_t groups, int64_t k, int64_t dim,
                            int bq, const float *x, int64_t ld, int64_t n, int32_t *counts, void *scratch) {
	if (ld <= 0) __builtin_unreachable();
	votesi512(wq, bp, sw, p0, p1, p2, dw, db, groups, k, dim, bq, x, ld, n, counts, scratch);
}

int64_t pate_votes_int16_scratch(int64_t dim, int64_t groups) {
	const int64_t xs = ((dim + 15) & ~(int64_t)15) / 2;
	return R512 * xs * 4 + R512 * (groups * 16 + 16) * 4 + R512 * dim * 4; // room for both widths
}

void pate_votes_int16(int vnni, const uint32_t *wq, const float *bp, const float *sw, const float *p0,
                      const float *p1, const float *p2, const float *dw, const float *db, int64_t groups, int64_t k,
                      int64_t dim, int bq, const float *x, int64_t ld, int64_t n, int32_t *counts, void *scratch) {
	if (vnni) {
		if (ld)
			votesi512cm(wq, bp, sw, p0, p1, p2, dw, db, groups, k, dim, bq, x, ld, n, counts, scratch);
		else
			votesi512rm(wq, bp, sw, p0, p1, p2, dw, db, groups, k, dim, bq, x, n, counts, scratch);
		return;
	}
	if (ld)
		votesicm(wq, bp, sw, p0, p1, p2, dw, db, groups, k, dim, bq, x, ld, n, counts, scratch);
	else
		votesirm(wq, bp, sw, p0, p1, p2, dw, db, groups, k, dim, bq, x, n, counts, scratch);
}

// Each layout gets its own copy of the kernels, with the stride of the other
// layout a constant zero: ld = 0 is row-major x (n × dim), ld > 0 column-major
// (x[j*ld + r]).
T512 static void votes512rm(const float *wp, const float *bp, const int32_t *rp, int64_t groups, int64_t k,
                            int64_t classes, int64_t pc, int64_t dim, const float *x, int64_t n, int32_t *counts) {
	votes512(wp, bp, rp, groups, k, classes, pc, dim, x, 0, n, counts);
}
T512 static void votes512cm(const float *wp, const float *bp, const int32_t *rp, int64_t groups, int64_t k,
                            int64_t classes, int64_t pc, int64_t dim, const float *x, int64_t ld, int64_t n,
                            int32_t *counts) {
	if (ld <= 0) __builtin_unreachable(); // folds XAT to the column-major form
	votes512(wp, bp, rp, groups, k, classes, pc, dim, x, ld, n, counts);
}
T256 static void votes256rm(const float *wp, const float *bp, const int32_t *rp, int64_t groups, int64_t k,
                            int64_t classes, int64_t pc, int64_t dim, const float *x, int64_t n, int32_t *counts) {
	votes256(wp, bp, rp, groups, k, classes, pc, dim, x, 0, n, counts);
}
T256 static void votes256cm(const float *wp, const float *bp, const int32_t *rp, int64_t groups, int64_t k,
                            int64_t classes, int64_t pc, int64_t dim, const float *x, int64_t ld, int64_t n,
                            int32_t *counts) {
	if (ld <= 0) __builtin_unreachable(); // folds XAT to the column-major form
	votes256(wp, bp, rp, groups, k, classes, pc, dim, x, ld, n, counts);
}

void pate_votes(int level, const float *wp, const float *bp, const int32_t *rp, int64_t groups, int64_t k,
                int64_t classes, int64_t pc, int64_t dim, const float *x, int64_t ld, int64_t n, int32_t *counts) {
	if (level >= PATE_ISA_AVX512) {
		if (ld)
			votes512cm(wp, bp, rp, groups, k, classes, pc, dim, x, ld, n, counts);
		else
			votes512rm(wp, bp, rp, groups, k, classes, pc, dim, x, n, counts);
	} else {
		if (ld)
			votes256cm(wp, bp, rp, groups, k, classes, pc, dim, x, ld, n, counts);
		else
			votes256rm(wp, bp, rp, groups, k, classes, pc, dim, x, n, counts);
	}
}
