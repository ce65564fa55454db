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

	// bf is the bf16 packing for two classes on AVX512_BF16 CPUs, nil
	// otherwise or when the weights are outside the certification bound's
	// guards.
	bf *packedBF16

	// i16 is the int16 packing for two classes on AVX2 and AVX-512 VNNI
	// CPUs, nil otherwise or when the weights are outside its guards.
	i16 *packedInt16
}

// packedBF16 holds bf16 copies ŵ of the difference weights (round to
// nearest even, subnormals flushed to zero, as vdpbf16ps reads them): the
// pair of features 2i, 2i+1 of teacher 16g+l is the 32-bit word
// w[(g*dim2+i)*16+l], feature 2i in its low half, dim2 = ⌈dim/2⌉. p1, p2
// and p0 hold per teacher, rounded up, the factors of the bound T on the
// distance between its bf16 score and its exact score (see
// kernel_amd64.c): p1 = ‖ŵ−w‖ + G(‖ŵ‖+‖w‖), p2 = ‖w‖(1+G), p0 = 2G|b| + A,
// where G = γ_m = m·2⁻²⁴/(1−m·2⁻²⁴) bounds the rounding of a float32 sum of
// m ≥ dim+2 terms and A the products and sums flushed to zero.
type packedBF16 struct {
	w          []uint32
	p0, p1, p2 []float32
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
	p.bf = packBF16(l, p.groups)
	p.i16 = packInt16(l, p.groups)
	return p
}

// The bf16 path takes rows of bf16MinDim to bf16MaxDim features, and
// column-major tiles from bf16MinDimColumns. The share of votes it cannot
// certify grows with √dim (about 5% at 384 features, 9% at 1,024 on random
// data) and the cost of rescoring one with dim: at 2,048 features it gained
// only about 10% over the float32 kernel, at 1,024 about 45% (row-major).
// At 14 features converting rows and checking bounds cost more than the
// multiply-adds saved, and column-major tiles also pay for a transposition.
const (
	bf16MinDim        = 64
	bf16MinDimColumns = 128
	bf16MaxDim        = 1024
)

// bf16Max bounds |w| for the bf16 packing (and, in kernel_amd64.c, a row's
// ‖x‖): with both below 2⁵⁰ and |b| below 2¹⁰⁰ no score overflows.
const bf16Max = 0x1p50

// packBF16 builds the bf16 packing, or returns nil when it cannot be used.
func packBF16(l *Linear, groups int) *packedBF16 {
	if !cpuBF16 || l.classes != 2 || l.dim < bf16MinDim || l.dim > bf16MaxDim {
		return nil
	}
	dim, dim2 := l.dim, (l.dim+1)/2
	for _, v := range l.dw {
		if !(math.Abs(float64(v)) <= bf16Max) {
			return nil
		}
	}
	if !biasesBounded(l) {
		return nil
	}
	g, a := certSlack(dim)
	bf := &packedBF16{
		w:  alignedWords(groups * dim2 * group),
		p0: alignedFloats(groups * group),
		p1: alignedFloats(groups * group),
		p2: alignedFloats(groups * group),
	}
	for t := 0; t < l.kv; t++ {
		gi, lane := t/group, t%group
		row := l.dw[t*dim : (t+1)*dim]
		var ww, hh, dd float64 // ‖w‖², ‖ŵ‖², ‖ŵ−w‖²
		for j, v := range row {
			h := bf16(v)
			hv := float64(math.Float32frombits(uint32(h) << 16))
			ww += float64(v) * float64(v)
			hh += hv * hv
			dd += (hv - float64(v)) * (hv - float64(v))
			bf.w[(gi*dim2+j/2)*group+lane] |= uint32(h) << (16 * (j % 2))
		}
		nw, nh, nd := math.Sqrt(ww), math.Sqrt(hh), math.Sqrt(dd)
		bf.p1[t] = float32((nd + g*(nh+nw)) * certUp)
		bf.p2[t] = float32(nw * (1 + g) * certUp)
		bf.p0[t] = float32((2*g*math.Abs(float64(l.db[t])) + a) * certUp)
	}
	return bf
}

// certUp covers the float32 roundings of a certified path's per-teacher
// factors and of the bound T computed from them.
const certUp = 1 + 0x1p-18

// certSlack returns, for the certified paths (bf16, int16) on rows of dim
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

// bf16 rounds v (finite, |v| <= bf16Max) to bfloat16 bits, to nearest even,
// flushing subnormal results to zero.
func bf16(v float32) uint16 {
	b := math.Float32bits(v)
	h := uint16((b + 0x7fff + (b>>16)&1) >> 16)
	if h&0x7f80 == 0 {
		return h & 0x8000
	}
	return h
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
