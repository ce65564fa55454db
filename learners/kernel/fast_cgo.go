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

// bf16Scratch holds the bf16 kernel's scratch between calls. The tile vote
// calls the kernel once per tile of about a hundred rows, and a fresh 40 KB
// buffer each time was a third of the run's allocations (zeroed, then
// collected); the kernel writes every byte it reads, so a reused buffer
// needs no clearing.
var bf16Scratch sync.Pool

func scratchOf(n int) *[]byte {
	if b, ok := bf16Scratch.Get().(*[]byte); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n)
	return &b
}

func detectISA() isaLevel {
	switch C.pate_cpu_level() {
	case C.PATE_ISA_AVX512BF16:
		return isaAVX512BF16
	case C.PATE_ISA_AVX512:
		return isaAVX512
	case C.PATE_ISA_AVX2:
		return isaAVX2
	}
	return isaGeneric
}

// votesFast runs the C kernel of activeISA on all n rows in one cgo call; x
// is row-major when ld is 0, column-major with leading dimension ld otherwise.
func (l *Linear) votesFast(x []float32, ld, n int, counts []int32) {
	p := l.packed
	if bf := p.bf; bf != nil && activeISA >= isaAVX512BF16 && (ld == 0 || l.dim >= bf16MinDimColumns) {
		sp := scratchOf(int(C.pate_votes_bf16_scratch(C.int64_t(l.dim), C.int64_t(p.groups))))
		defer bf16Scratch.Put(sp)
		scratch := *sp
		C.pate_votes_bf16((*C.uint32_t)(unsafe.Pointer(&bf.w[0])), (*C.float)(unsafe.Pointer(&p.b[0])),
			(*C.float)(unsafe.Pointer(&bf.p0[0])), (*C.float)(unsafe.Pointer(&bf.p1[0])), (*C.float)(unsafe.Pointer(&bf.p2[0])),
			(*C.float)(unsafe.Pointer(&l.dw[0])), (*C.float)(unsafe.Pointer(&l.db[0])),
			C.int64_t(p.groups), C.int64_t(l.k), C.int64_t(l.dim),
			(*C.float)(unsafe.Pointer(&x[0])), C.int64_t(ld), C.int64_t(n), (*C.int32_t)(unsafe.Pointer(&counts[0])),
			unsafe.Pointer(&scratch[0]))
		return
	}
	C.pate_votes(C.int(activeISA),
		(*C.float)(unsafe.Pointer(&p.w[0])), (*C.float)(unsafe.Pointer(&p.b[0])),
		C.int64_t(p.groups), C.int64_t(l.k), C.int64_t(l.classes), C.int64_t(p.pc), C.int64_t(l.dim),
		(*C.float)(unsafe.Pointer(&x[0])), C.int64_t(ld), C.int64_t(n), (*C.int32_t)(unsafe.Pointer(&counts[0])))
}

// logisticFast runs the C logistic kernel of activeISA (rows, dim >= 1).
func logisticFast(x, t []float64, rows, dim int, theta, grad []float64) float64 {
	var gb C.double
	f := C.pate_logistic(C.int(activeISA),
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
	C.pate_exp_nonpos(C.int(activeISA), (*C.double)(unsafe.Pointer(&x[0])), C.int64_t(len(x)),
		(*C.double)(unsafe.Pointer(&out[0])))
}
