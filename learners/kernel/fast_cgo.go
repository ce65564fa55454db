//go:build cgo && amd64

package kernel

/*
#cgo CFLAGS: -O3 -std=gnu11
#include "kernel_amd64.h"
*/
import "C"

import "unsafe"

func detectISA() isaLevel {
	switch C.pate_cpu_level() {
	case C.PATE_ISA_AVX512:
		return isaAVX512
	case C.PATE_ISA_AVX2:
		return isaAVX2
	}
	return isaGeneric
}

// votesFast runs the C kernel of activeISA on all n rows in one cgo call.
func (l *Linear) votesFast(x []float32, n int, counts []int32) {
	p := l.packed
	C.pate_votes(C.int(activeISA),
		(*C.float)(unsafe.Pointer(&p.w[0])), (*C.float)(unsafe.Pointer(&p.b[0])),
		C.int64_t(p.groups), C.int64_t(l.k), C.int64_t(l.classes), C.int64_t(p.pc), C.int64_t(l.dim),
		(*C.float)(unsafe.Pointer(&x[0])), C.int64_t(n), (*C.int32_t)(unsafe.Pointer(&counts[0])))
}
