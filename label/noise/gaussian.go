package noise

import (
	"math/big"
	"math/bits"
)

// DiscreteGaussian samples the discrete Gaussian distribution with parameter
// σ > 0: P(x) ∝ exp(−x²/(2σ²)) for every integer x (Canonne, Kamath, Steinke
// 2020, Algorithm 3: discrete Laplace proposals with scale t = ⌊σ⌋+1,
// accepted with probability exp(−(|y| − σ²/t)²/(2σ²))). Its variance is
// slightly below σ². A DiscreteGaussian is immutable and safe for concurrent
// use; each goroutine brings its own Source.
type DiscreteGaussian struct {
	sigma  *big.Rat
	sigma2 *big.Rat // σ²
	t      *big.Int // ⌊σ⌋ + 1
	s2t    *big.Rat // σ²/t
	two2   *big.Rat // 2σ²

	// Fast path, with σ = p/q reduced: γ(y) = (|y|·q²t − p²)² / (2p²q²t²).
	fast bool
	tf   uint64 // t
	q2t  uint64 // q²·t
	p2   uint64 // p²
	den  uint64 // 2·p²·q²·t²

	// Lazy tables (lazy.go): lap holds the first digits of exp(−u/t),
	// u < t (nil when t > maxLaplaceTable), for the proposals; acc those of
	// exp(−γ(a)), a < len(acc), for their acceptance.
	lap, acc []uint64
}

// NewDiscreteGaussian returns a discrete Gaussian sampler with the given
// rational σ, 0 < σ ≤ 2^40. σ is copied.
func NewDiscreteGaussian(sigma *big.Rat) (*DiscreteGaussian, error) {
	if err := checkParameter("discrete Gaussian σ", sigma); err != nil {
		return nil, err
	}
	g := &DiscreteGaussian{sigma: new(big.Rat).Set(sigma)}
	g.sigma2 = new(big.Rat).Mul(sigma, sigma)
	g.t = new(big.Int).Quo(sigma.Num(), sigma.Denom())
	g.t.Add(g.t, bigOne)
	g.s2t = new(big.Rat).Quo(g.sigma2, new(big.Rat).SetInt(g.t))
	g.two2 = new(big.Rat).Add(g.sigma2, g.sigma2)

	p, q := sigma.Num(), sigma.Denom()
	if p.IsUint64() && q.IsUint64() && g.t.IsUint64() {
		pf, qf, tf := p.Uint64(), q.Uint64(), g.t.Uint64()
		p2, ok1 := mul64(pf, pf)
		q2, ok2 := mul64(qf, qf)
		q2t, ok3 := mul64(q2, tf)
		d, ok4 := mul64(p2, q2t)
		d, ok5 := mul64(d, 2*tf) // tf ≤ 2^40+1, no overflow
		if ok1 && ok2 && ok3 && ok4 && ok5 {
			g.fast, g.tf, g.q2t, g.p2, g.den = true, tf, q2t, p2, d
			g.lap = laplaceTable(tf)
			g.acc = gaussianTable(p2, q2t, d)
		}
	}
	return g, nil
}

// mul64 returns a·b and whether it fits in 64 bits.
func mul64(a, b uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0
}

// Sigma returns a copy of σ.
func (g *DiscreteGaussian) Sigma() *big.Rat { return new(big.Rat).Set(g.sigma) }

// String describes the distribution, e.g. "discrete Gaussian(σ=6.23)".
func (g *DiscreteGaussian) String() string {
	return "discrete Gaussian(σ=" + ratText(g.sigma) + ")"
}

// Sample draws one value. It does not allocate when σ = p/q has
// p²·q²·(⌊σ⌋+1)² < 2^63 (for example σ = 40, 6.23 or 10^4).
//
// On the fast path the acceptance Bernoulli(exp(−γ(|y|))) of a proposal y is
// a lazy comparison with the table acc when |y| < len(acc) (lazy.go; the
// top 15 bits of its uniform X are laplaceFast's 15 spare bits, fresh and
// used for nothing else), and CKS20's Algorithm 1 otherwise (past the table
// every first digit is 0, so this is rare: |y| ≳ 10.5σ). Either returns true
// with probability exactly exp(−γ(|y|)), so the output law is that of
// Algorithm 3.
func (g *DiscreteGaussian) Sample(src Source) int64 {
	r := &rng{src: src}
	if !g.fast {
		return g.sampleBig(r)
	}
	for {
		y, spare := laplaceFast(r, g.tf, 1, g.lap)
		ay := uint64(y)
		if y < 0 {
			ay = uint64(-y)
		}
		if ay < uint64(len(g.acc)) {
			d := g.acc[ay]
			if b, c := spare, d>>49; b != c {
				if b < c {
					return y
				}
				continue
			}
			if lazyBernExpRest(r, d, g.gammaNum(ay), g.den, 15) {
				return y
			}
			continue
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
		// |y| is far in the tail: decide this proposal exactly with big.
		if g.acceptBig(r, big.NewInt(y)) {
			return y
		}
	}
}

// gammaNum returns (a·q²t − p²)², the numerator of γ(a) over den, for
// a < len(g.acc) (gaussianTable keeps only entries where it fits).
func (g *DiscreteGaussian) gammaNum(a uint64) uint64 {
	x := a * g.q2t
	if x < g.p2 {
		x = g.p2 - x
	} else {
		x -= g.p2
	}
	return x * x
}

// acceptBig returns true with probability exp(−(|y| − σ²/t)²/(2σ²)).
func (g *DiscreteGaussian) acceptBig(r *rng, y *big.Int) bool {
	gamma := new(big.Rat).SetInt(new(big.Int).Abs(y))
	gamma.Sub(gamma, g.s2t)
	gamma.Mul(gamma, gamma)
	gamma.Quo(gamma, g.two2)
	return bernExpBig(r, gamma.Num(), gamma.Denom())
}

// sampleBig is CKS20 Algorithm 3 in math/big arithmetic, conditioned on the
// result fitting in int64 (see maxParameter).
func (g *DiscreteGaussian) sampleBig(r *rng) int64 {
	for {
		y := laplaceBig(r, g.t, bigOne)
		if g.acceptBig(r, y) && y.IsInt64() {
			return y.Int64()
		}
	}
}
