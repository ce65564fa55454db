//go:build cgo && amd64

// Binary logistic loss and gradient over dense float64 rows (see logistic.go
// for the contract). Rows are taken 8 at a time, one row per vector lane (two
// 4-lane vectors with AVX2): the dot products w·x_r are vectorised over the
// features and summed across into vectors of z values, so e^−|z|, σ(z) and
// the loss terms of the block cost a vector exp and a division; the gradient
// x_r·(σ(z_r) − t_r) is accumulated vectorised over the features.
//
// The softplus terms log(1+e^−|z|) are summed as the logarithm of their
// product, one product per lane renormalised every 128 blocks (128 factors
// in [1, 2] stay below 2^128), one log per evaluation.
//
// Every function carries its own target attribute (see kernel_amd64.c).

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kernel_amd64.h"

#define AI static inline __attribute__((always_inline))
#define T512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,popcnt")))
#define T256 __attribute__((target("avx2,fma,popcnt")))

// Constants of the exponential: ln 2 = LN2HI + LN2LO to about 2^-110, and the
// Taylor coefficients 1/k! for k = 2..13. On the reduced argument
// |r| <= ln(2)/2 the truncation error r^14/14! is below 5e-18 relative, so the
// error is that of the Horner evaluation, about 1 ulp (TestExpAccuracy).
#define LOG2E 0x1.71547652b82fep+0
#define LN2HI 0x1.62e42fefa39efp-1
#define LN2LO 0x1.abc9e3b39803fp-56
#define SHIFT 0x1.8p52  /* adding it rounds to an integer held in the low mantissa bits */
#define EXPMIN -708.0   /* e^-708 ≈ 3.3e-308 is still normal; below, 1+e == 1 anyway */
#define RENORM 128      /* blocks between renormalisations of the products */

static const double inv_fact[14] = {
	1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880,
	1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800,
};

// renorm scales each of the n lane products to its frexp fraction in
// [0.5, 1) and adds the binary exponents to *exp2.
static void renorm(double *lanes, int n, double *exp2) {
	for (int l = 0; l < n; l++) {
		int e;
		lanes[l] = frexp(lanes[l], &e);
		*exp2 += e;
	}
}

// finish returns Σ lin + log(Π lanes) + exp2·ln 2 for the n lane sums and
// products (each product renormalised first, so their product stays in range).
static double finish(const double *lin, double *lanes, int n, double exp2) {
	renorm(lanes, n, &exp2);
	double s = 0, p = 1;
	for (int l = 0; l < n; l++) {
		s += lin[l];
		p *= lanes[l];
	}
	return s + log(p) + exp2 * M_LN2;
}

/* ---------------------------------------------------------------- AVX-512 */

// exp512 is e^x for x <= 0 (inputs below EXPMIN are raised to it; NaN stays
// NaN): x = n·ln 2 + r, e^x = 2^n·p(r).
T512 AI __m512d exp512(__m512d x) {
	const __m512d shift = _mm512_set1_pd(SHIFT);
	x = _mm512_max_pd(_mm512_set1_pd(EXPMIN), x); // returns x when x is NaN
	__m512d kd = _mm512_fmadd_pd(x, _mm512_set1_pd(LOG2E), shift);
	__m512d n = _mm512_sub_pd(kd, shift);
	__m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(LN2HI), x);
	r = _mm512_fnmadd_pd(n, _mm512_set1_pd(LN2LO), r);
	__m512d p = _mm512_set1_pd(inv_fact[13]);
#pragma GCC unroll 13
	for (int k = 12; k >= 0; k--) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(inv_fact[k]));
	// 2^n: the low bits of kd hold n; (n + 1023) << 52 is its bit pattern.
	__m512i sc = _mm512_slli_epi64(_mm512_add_epi64(_mm512_castpd_si512(kd), _mm512_set1_epi64(1023)), 52);
	return _mm512_mul_pd(p, _mm512_castsi512_pd(sc));
}

// hsum4x256 returns (Σ a0, Σ a1, Σ a2, Σ a3) for four 4-lane vectors.
T512 AI __m256d hsum4x256_512(__m256d a0, __m256d a1, __m256d a2, __m256d a3) {
	__m256d t0 = _mm256_hadd_pd(a0, a1); // a0[0]+a0[1], a1[0]+a1[1], a0[2]+a0[3], a1[2]+a1[3]
	__m256d t1 = _mm256_hadd_pd(a2, a3);
	return _mm256_add_pd(_mm256_permute2f128_pd(t0, t1, 0x20), _mm256_permute2f128_pd(t0, t1, 0x31));
}

T512 AI __m256d half512(__m512d a) {
	return _mm256_add_pd(_mm512_castpd512_pd256(a), _mm512_extractf64x4_pd(a, 1));
}

T512 static double logistic512(const double *x, const double *t, int64_t rows, int64_t dim, const double *w,
                               double b, double *gw, double *gb) {
	const int64_t full = dim & ~(int64_t)7;
	const __mmask8 tail = (__mmask8)((1u << (dim & 7)) - 1);
	__m512d lin = _mm512_setzero_pd(), gbv = _mm512_setzero_pd(), prod = _mm512_set1_pd(1);
	double exp2 = 0;
	memset(gw, 0, (size_t)dim * sizeof(double));
	for (int64_t i = 0, blk = 1; i < rows; i += 8, blk++) {
		const int nv = rows - i < 8 ? (int)(rows - i) : 8;
		const __mmask8 valid = (__mmask8)((1u << nv) - 1);
		// Lanes past the last row repeat it; their r is 0 and their loss
		// terms are masked out.
		const double *xr[8];
		for (int r = 0; r < 8; r++) xr[r] = x + (i + (r < nv ? r : nv - 1)) * dim;
		__m512d acc[8];
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) acc[r] = _mm512_setzero_pd();
		for (int64_t j = 0; j < full; j += 8) {
			__m512d wv = _mm512_loadu_pd(w + j);
#pragma GCC unroll 8
			for (int r = 0; r < 8; r++) acc[r] = _mm512_fmadd_pd(wv, _mm512_loadu_pd(xr[r] + j), acc[r]);
		}
		if (tail) {
			__m512d wv = _mm512_maskz_loadu_pd(tail, w + full);
#pragma GCC unroll 8
			for (int r = 0; r < 8; r++)
				acc[r] = _mm512_fmadd_pd(wv, _mm512_maskz_loadu_pd(tail, xr[r] + full), acc[r]);
		}
		__m256d lo = hsum4x256_512(half512(acc[0]), half512(acc[1]), half512(acc[2]), half512(acc[3]));
		__m256d hi = hsum4x256_512(half512(acc[4]), half512(acc[5]), half512(acc[6]), half512(acc[7]));
		__m512d z = _mm512_add_pd(_mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1), _mm512_set1_pd(b));
		__m512d tv = _mm512_maskz_loadu_pd(valid, t + i);

		// loss: max(z, 0) − t·z + log(1 + e^−|z|); σ(z) = 1/(1+e) for z >= 0, e/(1+e) below.
		__m512d e = exp512(_mm512_or_pd(z, _mm512_set1_pd(-0.0)));
		__m512d ope = _mm512_add_pd(_mm512_set1_pd(1), e);
		__m512d maxz = _mm512_max_pd(_mm512_setzero_pd(), z); // NaN stays NaN
		lin = _mm512_mask_add_pd(lin, valid, lin, _mm512_fnmadd_pd(tv, z, maxz));
		prod = _mm512_mask_mul_pd(prod, valid, prod, ope);
		__mmask8 neg = _mm512_cmp_pd_mask(z, _mm512_setzero_pd(), _CMP_LT_OQ);
		__m512d sig = _mm512_div_pd(_mm512_mask_blend_pd(neg, _mm512_set1_pd(1), e), ope);
		__m512d rv = _mm512_maskz_sub_pd(valid, sig, tv);
		gbv = _mm512_add_pd(gbv, rv);

		double rr[8];
		_mm512_storeu_pd(rr, rv);
		__m512d rb[8];
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) rb[r] = _mm512_set1_pd(rr[r]);
		for (int64_t j = 0; j < full; j += 8) {
			__m512d g = _mm512_loadu_pd(gw + j);
#pragma GCC unroll 8
			for (int r = 0; r < 8; r++) g = _mm512_fmadd_pd(rb[r], _mm512_loadu_pd(xr[r] + j), g);
			_mm512_storeu_pd(gw + j, g);
		}
		if (tail) {
			__m512d g = _mm512_maskz_loadu_pd(tail, gw + full);
#pragma GCC unroll 8
			for (int r = 0; r < 8; r++) g = _mm512_fmadd_pd(rb[r], _mm512_maskz_loadu_pd(tail, xr[r] + full), g);
			_mm512_mask_storeu_pd(gw + full, tail, g);
		}
		if (blk % RENORM == 0) {
			double lanes[8];
			_mm512_storeu_pd(lanes, prod);
			renorm(lanes, 8, &exp2);
			prod = _mm512_loadu_pd(lanes);
		}
	}
	*gb = _mm512_reduce_add_pd(gbv);
	double l[8], p[8];
	_mm512_storeu_pd(l, lin);
	_mm512_storeu_pd(p, prod);
	return finish(l, p, 8, exp2);
}

/* ------------------------------------------------------------------- AVX2 */

// exp256 is exp512 on four lanes.
T256 AI __m256d exp256(__m256d x) {
	const __m256d shift = _mm256_set1_pd(SHIFT);
	x = _mm256_max_pd(_mm256_set1_pd(EXPMIN), x);
	__m256d kd = _mm256_fmadd_pd(x, _mm256_set1_pd(LOG2E), shift);
	__m256d n = _mm256_sub_pd(kd, shift);
	__m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(LN2HI), x);
	r = _mm256_fnmadd_pd(n, _mm256_set1_pd(LN2LO), r);
	__m256d p = _mm256_set1_pd(inv_fact[13]);
#pragma GCC unroll 13
	for (int k = 12; k >= 0; k--) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(inv_fact[k]));
	__m256i sc = _mm256_slli_epi64(_mm256_add_epi64(_mm256_castpd_si256(kd), _mm256_set1_epi64x(1023)), 52);
	return _mm256_mul_pd(p, _mm256_castsi256_pd(sc));
}

T256 AI __m256d hsum4x256(__m256d a0, __m256d a1, __m256d a2, __m256d a3) {
	__m256d t0 = _mm256_hadd_pd(a0, a1);
	__m256d t1 = _mm256_hadd_pd(a2, a3);
	return _mm256_add_pd(_mm256_permute2f128_pd(t0, t1, 0x20), _mm256_permute2f128_pd(t0, t1, 0x31));
}

// lanemask256 has lanes 0..n−1 set (for maskload/maskstore); n <= 0 sets
// none, n >= 4 all.
T256 AI __m256i lanemask256(int n) {
	return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}

// terms256 takes four rows' z and labels (lanes outside valid are ignored):
// it adds their linear loss terms to *lin, multiplies their softplus factors
// into *prod and returns their σ(z) − t (0 outside valid).
T256 AI __m256d terms256(__m256d z, __m256d tv, __m256d valid, __m256d *lin, __m256d *prod) {
	const __m256d one = _mm256_set1_pd(1), zero = _mm256_setzero_pd();
	__m256d e = exp256(_mm256_or_pd(z, _mm256_set1_pd(-0.0)));
	__m256d ope = _mm256_add_pd(one, e);
	__m256d maxz = _mm256_max_pd(zero, z); // NaN stays NaN
	*lin = _mm256_add_pd(*lin, _mm256_and_pd(valid, _mm256_fnmadd_pd(tv, z, maxz)));
	*prod = _mm256_mul_pd(*prod, _mm256_blendv_pd(one, ope, valid));
	__m256d neg = _mm256_cmp_pd(z, zero, _CMP_LT_OQ);
	__m256d sig = _mm256_div_pd(_mm256_blendv_pd(one, e, neg), ope);
	return _mm256_and_pd(valid, _mm256_sub_pd(sig, tv));
}

// logistic256 takes 8 rows per block as two 4-lane halves, so the dot
// products run 8 independent FMA chains like the AVX-512 path.
T256 static double logistic256(const double *x, const double *t, int64_t rows, int64_t dim, const double *w,
                               double b, double *gw, double *gb) {
	const int64_t full = dim & ~(int64_t)3;
	const int ntail = (int)(dim & 3);
	const __m256i tail = lanemask256(ntail);
	__m256d lin[2], prod[2], gbv = _mm256_setzero_pd();
	for (int h = 0; h < 2; h++) {
		lin[h] = _mm256_setzero_pd();
		prod[h] = _mm256_set1_pd(1);
	}
	double exp2 = 0;
	memset(gw, 0, (size_t)dim * sizeof(double));
	for (int64_t i = 0, blk = 1; i < rows; i += 8, blk++) {
		const int nv = rows - i < 8 ? (int)(rows - i) : 8;
		const double *xr[8];
		for (int r = 0; r < 8; r++) xr[r] = x + (i + (r < nv ? r : nv - 1)) * dim;
		__m256d acc[8];
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) acc[r] = _mm256_setzero_pd();
		for (int64_t j = 0; j < full; j += 4) {
			__m256d wv = _mm256_loadu_pd(w + j);
#pragma GCC unroll 8
			for (int r = 0; r < 8; r++) acc[r] = _mm256_fmadd_pd(wv, _mm256_loadu_pd(xr[r] + j), acc[r]);
		}
		if (ntail) {
			__m256d wv = _mm256_maskload_pd(w + full, tail);
#pragma GCC unroll 8
			for (int r = 0; r < 8; r++)
				acc[r] = _mm256_fmadd_pd(wv, _mm256_maskload_pd(xr[r] + full, tail), acc[r]);
		}
		double rr[8];
#pragma GCC unroll 2
		for (int h = 0; h < 2; h++) {
			const __m256i valid = lanemask256(nv - 4 * h); // no lane when nv <= 4h
			__m256d z = hsum4x256(acc[4 * h], acc[4 * h + 1], acc[4 * h + 2], acc[4 * h + 3]);
			z = _mm256_add_pd(z, _mm256_set1_pd(b));
			__m256d tv = _mm256_maskload_pd(t + i + 4 * h, valid); // masked lanes are not read
			__m256d rv = terms256(z, tv, _mm256_castsi256_pd(valid), &lin[h], &prod[h]);
			gbv = _mm256_add_pd(gbv, rv);
			_mm256_storeu_pd(rr + 4 * h, rv);
		}

		__m256d rb[8];
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) rb[r] = _mm256_set1_pd(rr[r]);
		for (int64_t j = 0; j < full; j += 4) {
			__m256d g = _mm256_loadu_pd(gw + j);
#pragma GCC unroll 8
			for (int r = 0; r < 8; r++) g = _mm256_fmadd_pd(rb[r], _mm256_loadu_pd(xr[r] + j), g);
			_mm256_storeu_pd(gw + j, g);
		}
		if (ntail) {
			__m256d g = _mm256_maskload_pd(gw + full, tail);
#pragma GCC unroll 8
			for (int r = 0; r < 8; r++) g = _mm256_fmadd_pd(rb[r], _mm256_maskload_pd(xr[r] + full, tail), g);
			_mm256_maskstore_pd(gw + full, tail, g);
		}
		if (blk % RENORM == 0) {
			double lanes[8];
			_mm256_storeu_pd(lanes, prod[0]);
			_mm256_storeu_pd(lanes + 4, prod[1]);
			renorm(lanes, 8, &exp2);
			prod[0] = _mm256_loadu_pd(lanes);
			prod[1] = _mm256_loadu_pd(lanes + 4);
		}
	}
	double g[4], l[8], p[8];
	_mm256_storeu_pd(g, gbv);
	*gb = (g[0] + g[1]) + (g[2] + g[3]);
	_mm256_storeu_pd(l, lin[0]);
	_mm256_storeu_pd(l + 4, lin[1]);
	_mm256_storeu_pd(p, prod[0]);
	_mm256_storeu_pd(p + 4, prod[1]);
	return finish(l, p, 8, exp2);
}

/* --------------------------------------------------------------- dispatch */

double pate_logistic(int level, const double *x, const double *t, int64_t rows, int64_t dim, const double *w,
                     double b, double *gw, double *gb) {
	if (level >= PATE_ISA_AVX512) return logistic512(x, t, rows, dim, w, b, gw, gb);
	return logistic256(x, t, rows, dim, w, b, gw, gb);
}

T512 static void exp512n(const double *x, int64_t n, double *out) {
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) _mm512_storeu_pd(out + i, exp512(_mm512_loadu_pd(x + i)));
	for (; i < n; i++) {
		__mmask8 m = 1;
		_mm512_mask_storeu_pd(out + i, m, exp512(_mm512_maskz_loadu_pd(m, x + i)));
	}
}

T256 static void exp256n(const double *x, int64_t n, double *out) {
	int64_t i = 0;
	for (; i + 4 <= n; i += 4) _mm256_storeu_pd(out + i, exp256(_mm256_loadu_pd(x + i)));
	for (; i < n; i++) _mm256_maskstore_pd(out + i, lanemask256(1), exp256(_mm256_maskload_pd(x + i, lanemask256(1))));
}

void pate_exp_nonpos(int level, const double *x, int64_t n, double *out) {
	if (level >= PATE_ISA_AVX512)
		exp512n(x, n, out);
	else
		exp256n(x, n, out);
}
