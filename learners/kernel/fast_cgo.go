//go:build cgo && amd64

package kernel

/*
#cgo CFLAGS: -O3 -std=gnu11
#cgo LDFLAGS: -lm
#include "kernel_amd64.h"
*/
import "C"

import (
	"sync"
	"unsafe"
)

// kernelScratch holds the int16 kernels' scratch between calls.
// The tile vote calls a kernel once per tile of about a hundred rows, and a
// fresh 40 KB buffer each time was a third of the run's allocations (zeroed,
// then collected); the kernels write every byte they read, so a reused
// buffer needs no clearing.
var kernelScratch sync.Pool

func scratchOf(n int) *[]byte {
	if b, ok := kernelScratch.Get().(*[]byte); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n)
	return &b
}

// cpuVNNI says whether the CPU has AVX512_VNNI, which isaAVX512Int16 needs.
var cpuVNNI = C.pate_cpu_vnni() != 0

func detectISA() isaLevel {
	switch C.pate_cpu_level() {
	case C.PATE_ISA_AVX512:
		if cpuVNNI {
			return isaAVX512Int16
		}
		return isaAVX512
	case C.PATE_ISA_AVX2:
		return isaAVX2Int16
	}
	return isaGeneric
}

// cLevel is the C kernels' level for l: the int16 paths are variants of
// the AVX2 and AVX-512 levels that votesFast chooses itself.
func cLevel(l isaLevel) C.int {
	switch {
	case l >= isaAVX512:
		return C.PATE_ISA_AVX512
	case l >= isaAVX2:
		return C.PATE_ISA_AVX2
	}
	return 0
}

// votesFast runs the C kernel of activeISA on all n rows in one cgo call; x
// is row-major when ld is 0, column-major with leading dimension ld otherwise.
func (l *Linear) votesFast(x []float32, ld, n int, counts []int32) {
	p := l.packed
	if iq := p.i16; iq != nil && (activeISA == isaAVX2Int16 || activeISA == isaAVX512Int16) &&
		(ld == 0 || l.dim >= int16MinDimColumns) {
		vnni := C.int(0)
		if activeISA == isaAVX512Int16 {
			vnni = 1
		}
		sp := scratchOf(int(C.pate_votes_int16_scratch(C.int64_t(l.dim), C.int64_t(p.groups))))
		defer kernelScratch.Put(sp)
		scratch := *sp
		C.pate_votes_int16(vnni, (*C.uint32_t)(unsafe.Pointer(&iq.w[0])), (*C.float)(unsafe.Pointer(&p.b[0])),
			(*C.float)(unsafe.Pointer(&iq.sw[0])),
			(*C.float)(unsafe.Pointer(&iq.p0[0])), (*C.float)(unsafe.Pointer(&iq.p1[0])), (*C.float)(unsafe.Pointer(&iq.p2[0])),
			(*C.float)(unsafe.Pointer(&l.dw[0])), (*C.float)(unsafe.Pointer(&l.db[0])),
			C.int64_t(p.groups), C.int64_t(l.kv), C.int64_t(l.dim), C.int(iq.bq),
			(*C.float)(unsafe.Pointer(&x[0])), C.int64_t(ld), C.int64_t(n), (*C.int32_t)(unsafe.Pointer(&counts[0])),
			unsafe.Pointer(&scratch[0]))
		return
	}
	C.pate_votes(cLevel(activeISA),
		(*C.float)(unsafe.Pointer(&p.w[0])), (*C.float)(unsafe.Pointer(&p.b[0])), (*C.int32_t)(unsafe.Pointer(&p.ref[0])),
		C.int64_t(p.groups), C.int64_t(l.kv), C.int64_t(l.classes), C.int64_t(p.pc), C.int64_t(l.dim),
		(*C.float)(unsafe.Pointer(&x[0])), C.int64_t(ld), C.int64_t(n), (*C.int32_t)(unsafe.Pointer(&counts[0])))
}

// logisticFast runs the C logistic kernel of activeISA (rows, dim >= 1).
func logisticFast(x, t []float64, rows, dim int, theta, grad []float64) float64 {
	var gb C.double
	f := C.pate_logistic(cLevel(activeISA),
		(*C.double)(unsafe.Pointer(&x[0])), (*C.double)(unsafe.Pointer(&t[0])), C.int64_t(rows), C.int64_t(dim),
		(*C.double)(unsafe.Pointer(&theta[0])), C.double(theta[dim]),
		(*C.double)(unsafe.Pointer(&grad[0])), &gb)
	grad[dim] = float64(gb)
	return float64(f)
}

// expNonPos writes e^x[i] (x[i] <= 0) to out with the C kernels' vector exp
// of activeISA; tests bound its error.
func expNonPos(x, out []float64) {
	if len(x) == 0 {
		return
	}
	C.pate_exp_nonpos(cLevel(activeISA), (*C.double)(unsafe.Pointer(&x[0])), C.int64_t(len(x)),
		(*C.double)(unsafe.Pointer(&out[0])))
}
