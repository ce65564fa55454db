package kernel

import "math"

// packedInt16 holds 16-bit integer copies of the difference weights for the
// int16 paths, AVX2 and AVX-512 VNNI (see kernel_amd64.c): teacher t's weights are scaled by a
// power of two 2^et, chosen so that its largest magnitude is below 2^bq,
// and rounded to the nearest integer, ties to even; ŵ = q·2^-et. The pair
// of features 2i, 2i+1 of teacher 16g+l is the 32-bit word
// w[(g*dim2+i)*16+l], feature 2i in its low half, dim2 = ⌈dim/2⌉. sw holds
// 2^-et, and p1, p2 and p0 hold per teacher, rounded up, the factors of the
// bound T on the distance between its integer score and its exact score:
// p1 = ‖ŵ−w‖ + G‖w‖ + C‖ŵ‖, p2 = ‖ŵ−w‖ + ‖ŵ‖ + G‖w‖, p0 = (G+C)|b| + A,
// with G = γ_m = m·2⁻²⁴/(1−m·2⁻²⁴), which bounds the rounding of a float32
// sum of m ≥ dim+2 terms, C = 2⁻²⁰ the slack of converting the integer
// score to float32, and A the products and sums that underflow (see
// certSlack).
type packedInt16 struct {
	w              []uint32
	sw, p0, p1, p2 []float32
	bq             int
}

// The int16 path takes rows of int16MinDim to int16MaxDim features, and
// column-major tiles from int16MinDimColumns (it copies them to rows).
const (
	int16MinDim        = 64
	int16MinDimColumns = 128
	int16MaxDim        = 1024
)

// int16Bits is the largest bq <= 14 with dim·4^bq < 2³¹: a sum of dim
// products of integers of magnitude <= 2^bq then fits in an int32 lane.
func int16Bits(dim int) int {
	b := 14
	for b > 0 && float64(dim)*math.Ldexp(1, 2*b) >= 0x1p31 {
		b--
	}
	return b
}

// packInt16 builds the int16 packing, or returns nil when it cannot be used.
func packInt16(l *Linear, groups int) *packedInt16 {
	if cpuISA < isaAVX2Int16 || l.classes != 2 || l.dim < int16MinDim || l.dim > int16MaxDim {
		return nil
	}
	if !biasesBounded(l) {
		return nil
	}
	dim, dim2 := l.dim, (l.dim+1)/2
	bq := int16Bits(dim)
	g, a := certSlack(dim)
	const c = 0x1p-20 // the slack of converting an integer score to float32
	iq := &packedInt16{
		w:  alignedWords(groups * dim2 * group),
		sw: alignedFloats(groups * group),
		p0: alignedFloats(groups * group),
		p1: alignedFloats(groups * group),
		p2: alignedFloats(groups * group),
		bq: bq,
	}
	for t := 0; t < l.kv; t++ {
		gi, lane := t/group, t%group
		row := l.dw[t*dim : (t+1)*dim]
		var mx float64
		for _, v := range row {
			mx = math.Max(mx, math.Abs(float64(v)))
		}
		if !(mx <= 0x1p50) || (mx > 0 && mx < 0x1p-60) {
			return nil
		}
		et := 0
		if mx > 0 {
			_, k := math.Frexp(mx) // mx = f·2^k, 1/2 <= f < 1
			et = bq - k
		}
		scale, inv := math.Ldexp(1, et), math.Ldexp(1, -et)
		var ww, hh, dd float64 // ‖w‖², ‖ŵ‖², ‖ŵ−w‖²
		for j, v := range row {
			q := math.RoundToEven(float64(v) * scale)
			hv := q * inv
			ww += float64(v) * float64(v)
			hh += hv * hv
			dd += (hv - float64(v)) * (hv - float64(v))
			iq.w[(gi*dim2+j/2)*group+lane] |= uint32(uint16(int16(q))) << (16 * (j % 2))
		}
		// The sums above are float64 and exact to far better than certUp.
		nw, nh, nd := math.Sqrt(ww), math.Sqrt(hh), math.Sqrt(dd)
		iq.sw[t] = float32(inv)
		iq.p1[t] = float32((nd + g*nw + c*nh) * certUp)
		iq.p2[t] = float32((nd + nh + g*nw) * certUp)
		iq.p0[t] = float32(((g+c)*math.Abs(float64(l.db[t])) + a) * certUp)
	}
	return iq
}
