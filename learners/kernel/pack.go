package kernel

import (
	"math"
	"unsafe"
)

// group is the number of teachers packed side by side: one AVX-512 register
// or two AVX2 registers hold one feature's weights for a whole group.
const group = 16

// packedLinear holds the scored teachers' weights in the SIMD layout:
// teachers padded to a multiple of 16 with zero weights and biases; the
// weight of teacher 16g+l, packed class c, feature j is
// w[((g*pc+c)*dim+j)*16+l], its bias b[(g*pc+c)*16+l], where pc =
// classes−1 and packed class c holds the line of class c+1 (see Linear),
// and its reference class ref[16g+l] (0 for padded teachers, whose lines
// all score 0: they vote class 0, which the kernels take back).
type packedLinear struct {
	w, b   []float32
	ref    []int32
	groups int
	pc     int

	// i16 is the int16 packing for two classes on AVX2 and AVX-512 VNNI
	// CPUs, nil otherwise or when the weights are outside its guards.
	i16 *packedInt16
}

// pack builds the SIMD layout, or returns nil when no SIMD path can run.
func pack(l *Linear) *packedLinear {
	if cpuISA == isaGeneric {
		return nil
	}
	p := &packedLinear{groups: (l.kv + group - 1) / group, pc: l.classes - 1}
	src, bsrc := l.dw, l.db
	dim := l.dim
	p.w = alignedFloats(p.groups * p.pc * dim * group)
	p.b = alignedFloats(p.groups * p.pc * group)
	p.ref = make([]int32, p.groups*group)
	copy(p.ref, l.ref)
	for t := 0; t < l.kv; t++ {
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
	p.i16 = packInt16(l, p.groups)
	return p
}

// certUp covers the float32 roundings of a certified path's per-teacher
// factors and of the bound T computed from them.
const certUp = 1 + 0x1p-18

// certSlack returns, for the certified int16 paths on rows of dim
// features, G = γ_m (with 1% to spare), which bounds the rounding of a
// float32 sum of m = 2⌈dim/2⌉+2 >= dim+2 terms, and A, which bounds the
// products and sums flushed to zero or underflowed.
func certSlack(dim int) (g, a float64) {
	m := float64(2*((dim+1)/2) + 2)
	return 1.01 * m * 0x1p-24 / (1 - m*0x1p-24), float64(dim+4) * 0x1p-120
}

// biasesBounded reports whether every difference bias is within 2¹⁰⁰, as
// the certified paths' bounds need.
func biasesBounded(l *Linear) bool {
	for _, v := range l.db {
		if !(math.Abs(float64(v)) <= 0x1p100) {
			return false
		}
	}
	return true
}

// alignedWords is alignedFloats for the 32-bit words of the low-precision
// packings.
func alignedWords(n int) []uint32 {
	f := alignedFloats(n)
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
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
