package noise

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// maxParameter bounds σ and the Laplace scale. Vote counts are at most the
// number of teachers; the bound keeps every sample far inside int64 (a sample
// outside it has probability below exp(−2^20)).
var maxParameter = new(big.Rat).SetInt64(1 << 40)

// checkParameter validates a scale-like parameter: 0 < r ≤ 2^40.
func checkParameter(name string, r *big.Rat) error {
	if r == nil {
		return fmt.Errorf("%w: %s is missing", ErrInvalidParameter, name)
	}
	if r.Sign() <= 0 {
		return fmt.Errorf("%w: %s must be positive, got %s", ErrInvalidParameter, name, r.RatString())
	}
	if r.Cmp(maxParameter) > 0 {
		return fmt.Errorf("%w: %s must be at most 2^40, got %s", ErrInvalidParameter, name, r.RatString())
	}
	return nil
}

// DiscreteLaplace samples the discrete Laplace distribution with scale t > 0:
// P(x) = (e^{1/t} − 1)/(e^{1/t} + 1) · e^{−|x|/t} for every integer x
// (Canonne, Kamath, Steinke 2020, Algorithm 2). A DiscreteLaplace is
// immutable and safe for concurrent use; each goroutine brings its own Source.
type DiscreteLaplace struct {
	scale *big.Rat
	num   *big.Int // scale = num/den, reduced
	den   *big.Int

	fast   bool // num and den fit in uint64
	nf, df uint64
	acc    []uint64 // first digits of exp(−u/nf), u < nf (lazy.go); nil if nf > maxLaplaceTable
}

// NewDiscreteLaplace returns a discrete Laplace sampler with the given
// rational scale, 0 < scale ≤ 2^40. The scale is copied.
func NewDiscreteLaplace(scale *big.Rat) (*DiscreteLaplace, error) {
	if err := checkParameter("discrete Laplace scale", scale); err != nil {
		return nil, err
	}
	l := &DiscreteLaplace{
		scale: new(big.Rat).Set(scale),
		num:   new(big.Int).Set(scale.Num()),
		den:   new(big.Int).Set(scale.Denom()),
	}
	if l.num.IsUint64() && l.den.IsUint64() {
		l.fast, l.nf, l.df = true, l.num.Uint64(), l.den.Uint64()
		l.acc = laplaceTable(l.nf)
	}
	return l, nil
}

// Scale returns a copy of the scale t.
func (l *DiscreteLaplace) Scale() *big.Rat { return new(big.Rat).Set(l.scale) }

// String describes the distribution, e.g. "discrete Laplace(scale=20)".
func (l *DiscreteLaplace) String() string {
	return "discrete Laplace(scale=" + ratText(l.scale) + ")"
}

// Sample draws one value. It does not allocate when the scale's numerator
// and denominator fit in 64 bits.
func (l *DiscreteLaplace) Sample(src Source) int64 {
	r := &rng{src: src}
	if l.fast {
		y, _ := laplaceFast(r, l.nf, l.df, l.acc)
		return y
	}
	return laplaceBigInt64(r, l.num, l.den)
}

// laplaceFast samples the discrete Laplace distribution with scale t/s
// (CKS20 Algorithm 2) in uint64 arithmetic; t, s ≥ 1. acc, when not nil,
// holds the first digits of exp(−u/t), u ∈ [0, t) (laplaceTable). The two
// Bernoulli steps of Algorithm 2 are drawn by lazy comparison (lazy.go):
// the acceptance of u, Bernoulli(exp(−u/t)), with acc (or CKS20's
// Algorithm 1 when t is too large for a table), and v, the count of
// Bernoulli(exp(−1)) successes before a failure, by geometricExp1. Both have
// exactly the laws Algorithm 2 asks for, so the output law is unchanged.
// It returns the sample and 15 spare random bits, drawn with it and used for
// nothing else (the discrete Gaussian's acceptance starts with them).
func laplaceFast(r *rng, t, s uint64, acc []uint64) (int64, uint64) {
	for {
		var u uint64
		if acc != nil && t <= 1<<8 {
			// One 32-bit draw: u by Lemire's method on its low 16 bits, as
			// r.uniform(t) would (a rejected draw restarts the loop, which
			// draws afresh just as uniform's own loop would), and the first
			// 16 bits of the acceptance's uniform X in its high 16 bits.
			if r.nb < 32 {
				r.refill()
			}
			x := r.next(32)
			m := (x & (1<<16 - 1)) * t
			if lo := m & (1<<16 - 1); lo < t && lo < (1<<16)%t {
				continue
			}
			u = m >> 16
			if b, c := x>>16, acc[u]>>48; b != c {
				if b > c {
					continue
				}
			} else if !lazyBernExpRest(r, acc[u], u, t, 16) {
				continue
			}
		} else {
			u = r.uniform(t)
			if acc != nil {
				if !lazyBernExp(r, acc[u], u, t) {
					continue
				}
			} else if !bernExpFrac(r, u, t) {
				continue
			}
		}
		// 32 bits: the first 16 of the geometric's X, the sign, and 15
		// spare bits returned to the caller.
		if r.nb < 32 {
			r.refill()
		}
		z := r.next(32)
		var v uint64 // b > geoTop[0] means X > e^{−1}, v = 0: decided inline
		if b := z & (1<<16 - 1); b <= geoTop[0] {
			v = geometricExp1(r, b)
		}
		// x = u + t·v, y = ⌊x/s⌋, in 128 bits.
		hi, lo := bits.Mul64(t, v)
		var c uint64
		lo, c = bits.Add64(lo, u, 0)
		hi += c
		if hi >= s {
			continue // y ≥ 2^64: see maxParameter; probability < exp(−2^20)
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
		if z>>16&1 == 1 {
			if y == 0 {
				continue
			}
			return -int64(y), z >> 17
		}
		return int64(y), z >> 17
	}
}

// laplaceBig samples the discrete Laplace distribution with scale t/s
// (CKS20 Algorithm 2) with math/big; t, s ≥ 1.
func laplaceBig(r *rng, t, s *big.Int) *big.Int {
	for {
		u := uniformBig(r, t)
		if !bernExpFracBig(r, u, t) {
			continue
		}
		var v uint64
		for bernExp1(r) {
			v++
		}
		x := new(big.Int).SetUint64(v)
		x.Mul(x, t).Add(x, u)
		y := x.Quo(x, s)
		if r.take(1) == 1 {
			if y.Sign() == 0 {
				continue
			}
			y.Neg(y)
		}
		return y
	}
}

// laplaceBigInt64 is laplaceBig conditioned on the result fitting in int64
// (see maxParameter: the condition has probability above 1 − exp(−2^20)).
func laplaceBigInt64(r *rng, t, s *big.Int) int64 {
	for {
		if y := laplaceBig(r, t, s); y.IsInt64() {
			return y.Int64()
		}
	}
}
