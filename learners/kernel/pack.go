package kernel

import "unsafe"

// group is the number of teachers packed side by side: one AVX-512 register
// or two AVX2 registers hold one feature's weights for a whole group.
const group = 16

// packedLinear holds the weights in the SIMD layout: teachers padded to a
// multiple of 16 with zero weights and biases; the weight of teacher 16g+l,
// packed class c, feature j is w[((g*pc+c)*dim+j)*16+l], its bias
// b[(g*pc+c)*16+l], where pc = classes−1 and packed class c holds the
// difference class c+1 − class 0.
type packedLinear struct {
	w, b   []float32
	groups int
	pc     int
}

// pack builds the SIMD layout, or returns nil when no SIMD path can run.
func pack(l *Linear) *packedLinear {
	if cpuISA == isaGeneric {
		return nil
	}
	p := &packedLinear{groups: (l.k + group - 1) / group, pc: l.classes - 1}
	src, bsrc := l.dw, l.db
	dim := l.dim
	p.w = alignedFloats(p.groups * p.pc * dim * group)
	p.b = alignedFloats(p.groups * p.pc * group)
	for t := 0; t < l.k; t++ {
		g, lane := t/group, t%group
		for c := 0; c < p.pc; c++ {
			row := src[(t*p.pc+c)*dim : (t*p.pc+c+1)*dim]
			base := (g*p.pc + c) * dim * group
			for j, v := range row {
				p.w[base+j*group+lane] = v
			}
			p.b[(g*p.pc+c)*group+lane] = bsrc[t*p.pc+c]
		}
	}
	return p
}

// alignedFloats returns n zeroed float32s starting on a 64-byte boundary, so
// the kernels' aligned vector loads are legal.
func alignedFloats(n int) []float32 {
	s := make([]float32, n+16)
	off := 0
	for uintptr(unsafe.Pointer(&s[off]))%64 != 0 {
		off++
	}
	return s[off : off+n : off+n]
}
