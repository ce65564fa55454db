package noise

import (
	"math"
	"math/big"
	"math/bits"
)

// The CKS20 samplers as they were before the lazy tables (lazy.go): every
// Bernoulli step by Algorithm 1 (bernExp, bernExpFrac, bernExp1). They are the
// reference the lazy samplers are tested against, and the "reference"
// sub-benchmarks.

// referenceLaplaceFast is CKS20 Algorithm 2 in uint64 arithmetic, scale t/s.
func referenceLaplaceFast(r *rng, t, s uint64) int64 {
	for {
		u := r.uniform(t)
		if !bernExpFrac(r, u, t) {
			continue
		}
		var v uint64
		for bernExp1(r) {
			v++
		}
		// x = u + t·v, y = ⌊x/s⌋, in 128 bits.
		hi, lo := bits.Mul64(t, v)
		var c uint64
		lo, c = bits.Add64(lo, u, 0)
		hi += c
		if hi >= s {
			continue
		}
		y := lo
		if s != 1 {
			y, _ = bits.Div64(hi, lo, s)
		} else if hi != 0 {
			continue
		}
		if y > math.MaxInt64 {
			continue
		}
		if r.take(1) == 1 {
			if y == 0 {
				continue
			}
			return -int64(y)
		}
		return int64(y)
	}
}

// referenceSample is DiscreteGaussian.Sample's fast path by CKS20 Algorithm 3
// over referenceLaplaceFast and bernExp (g.fast must be true).
func (g *DiscreteGaussian) referenceSample(src Source) int64 {
	r := &rng{src: src}
	for {
		y := referenceLaplaceFast(r, g.tf, 1)
		ay := uint64(y)
		if y < 0 {
			ay = uint64(-y)
		}
		hi, lo := bits.Mul64(ay, g.q2t)
		if hi == 0 {
			a := lo - g.p2
			if lo < g.p2 {
				a = g.p2 - lo
			}
			if h, n := bits.Mul64(a, a); h == 0 {
				if bernExp(r, n, g.den) {
					return y
				}
				continue
			}
		}
		if g.acceptBig(r, big.NewInt(y)) {
			return y
		}
	}
}

// referenceSample is DiscreteLaplace.Sample's fast path by CKS20 Algorithm 2
// (l.fast must be true).
func (l *DiscreteLaplace) referenceSample(src Source) int64 {
	return referenceLaplaceFast(&rng{src: src}, l.nf, l.df)
}
