// Fused SIMD vote kernels (see kernel_amd64.c). Only built with cgo on amd64.
#ifndef PATE_KERNEL_AMD64_H
#define PATE_KERNEL_AMD64_H
#include <stdint.h>

// ISA levels of the float32 kernels (the int16 paths are variants of them
// that the Go side chooses).
#define PATE_ISA_AVX2 1
#define PATE_ISA_AVX512 2

// pate_cpu_level returns the best ISA level the CPU and OS support (0: none).
int pate_cpu_level(void);

// pate_votes overwrites counts (n × classes) with the votes of k teachers
// packed in groups of 16 (see pack.go) on the n rows of x: row-major (n × dim)
// when ld is 0, column-major with leading dimension ld >= n (feature j of row r
// at x[j*ld + r]) otherwise. pc = classes−1 packed classes hold scores
// relative to each teacher's reference class rp[t] (groups × 16 entries,
// 0 for padding), which scores 0 and has the teacher's vote unless another
// class scores more; with two classes rp is not read and the reference is
// class 0.
void pate_votes(int level, const float *wp, const float *bp, const int32_t *rp, int64_t groups, int64_t k,
                int64_t classes, int64_t pc, int64_t dim, const float *x, int64_t ld, int64_t n, int32_t *counts);

// pate_votes_int16 is pate_votes for two classes on the int16 packing of
// pack.go (AVX2, or AVX-512 VNNI when vnni is set): wq holds ⌈dim/2⌉ pairs of 16-bit integers per teacher and
// group, sw the teachers' scales, p0, p1 and p2 the per-teacher factors of
// the certification bound, bq the bit bound of the integers, dw and db the
// float32 difference weights and biases (k × dim, k) for rescoring the
// teachers it cannot certify. scratch holds pate_votes_int16_scratch(dim,
// groups) bytes.
void pate_votes_int16(int vnni, const uint32_t *wq, const float *bp, const float *sw, const float *p0,
                      const float *p1, const float *p2, const float *dw, const float *db, int64_t groups, int64_t k,
                      int64_t dim, int bq, const float *x, int64_t ld, int64_t n, int32_t *counts, void *scratch);

// pate_cpu_vnni reports whether the CPU has AVX512_VNNI (pate_votes_int16
// with vnni set needs it and level PATE_ISA_AVX512).
int pate_cpu_vnni(void);
int64_t pate_votes_int16_scratch(int64_t dim, int64_t groups);

// pate_logistic overwrites gw (dim) and *gb with the gradient of the binary
// logistic loss of the rows of x (rows × dim) with labels t at weights w and
// intercept b, and returns the loss (see logistic.go).
double pate_logistic(int level, const double *x, const double *t, int64_t rows, int64_t dim, const double *w,
                     double b, double *gw, double *gb);

// pate_exp_nonpos writes e^x[i] for the n values x[i] <= 0 to out (tests).
void pate_exp_nonpos(int level, const double *x, int64_t n, double *out);
#endif
