package noise

import (
	"fmt"
	"math/big"
	"math/bits"
)

// BernoulliExp returns true with probability exp(−γ), exactly, for a rational
// γ ≥ 0 (Canonne, Kamath, Steinke 2020, Algorithm 1). It uses uint64
// arithmetic when γ's numerator and denominator fit, and math/big otherwise.
func BernoulliExp(src Source, gamma *big.Rat) (bool, error) {
	if gamma == nil || gamma.Sign() < 0 {
		return false, fmt.Errorf("%w: Bernoulli(exp(−γ)) needs γ ≥ 0, got %v", ErrInvalidParameter, gamma)
	}
	r := &rng{src: src}
	n, d := gamma.Num(), gamma.Denom()
	if n.IsUint64() && d.IsUint64() {
		return bernExp(r, n.Uint64(), d.Uint64()), nil
	}
	return bernExpBig(r, n, d), nil
}

// --- uint64 fast path -------------------------------------------------------

// bernRatio returns true with probability n/(d·k), for n ≤ d, d, k ≥ 1.
// When d·k overflows, it uses Bernoulli(n/d) ∧ Bernoulli(1/k), which has the
// same probability.
func bernRatio(r *rng, n, d, k uint64) bool {
	hi, dk := bits.Mul64(d, k)
	if hi == 0 {
		return r.uniform(dk) < n
	}
	return r.uniform(d) < n && r.uniform(k) == 0
}

// bernExpFrac returns true with probability exp(−n/d) for 0 ≤ n ≤ d, d ≥ 1
// (CKS20 Algorithm 1, case γ ∈ [0, 1]).
func bernExpFrac(r *rng, n, d uint64) bool {
	if n == 0 {
		return true
	}
	k := uint64(1)
	for bernRatio(r, n, d, k) {
		k++
	}
	return k&1 == 1
}

// bernExp1 returns true with probability exp(−1). It is bernExpFrac(1, 1)
// with the first draw, Bernoulli(1/1), skipped since it always succeeds.
func bernExp1(r *rng) bool {
	k := uint64(2)
	for r.uniform(k) == 0 {
		k++
	}
	return k&1 == 1
}

// bernExp returns true with probability exp(−n/d) for d ≥ 1 (CKS20
// Algorithm 1): ⌊γ⌋ trials of Bernoulli(exp(−1)), stopping at the first
// failure, then one Bernoulli(exp(−(γ−⌊γ⌋))).
func bernExp(r *rng, n, d uint64) bool {
	for q := n / d; q > 0; q-- {
		if !bernExp1(r) {
			return false
		}
	}
	return bernExpFrac(r, n%d, d)
}

// --- math/big path ------------------------------------------------------------

var bigOne = big.NewInt(1)

// bernRatioBig returns true with probability n/d, 0 ≤ n ≤ d, d ≥ 1.
func bernRatioBig(r *rng, n, d *big.Int) bool {
	return uniformBig(r, d).Cmp(n) < 0
}

// bernExpFracBig returns true with probability exp(−n/d), 0 ≤ n ≤ d, d ≥ 1.
func bernExpFracBig(r *rng, n, d *big.Int) bool {
	if n.Sign() == 0 {
		return true
	}
	k := int64(1)
	dk := new(big.Int).Set(d)
	kb := new(big.Int)
	for bernRatioBig(r, n, dk) {
		k++
		dk.Mul(d, kb.SetInt64(k))
	}
	return k&1 == 1
}

// bernExpBig returns true with probability exp(−n/d), n ≥ 0, d ≥ 1.
func bernExpBig(r *rng, n, d *big.Int) bool {
	q, rem := new(big.Int).QuoRem(n, d, new(big.Int))
	for i := new(big.Int); i.Cmp(q) < 0; i.Add(i, bigOne) {
		if !bernExp1(r) {
			return false
		}
	}
	return bernExpFracBig(r, rem, d)
}
