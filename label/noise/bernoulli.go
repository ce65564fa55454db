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
	n, d := gamma.Num(), gamma.Denom()
	if n.IsUint64() && d.IsUint64() {
		return bernExp(src, n.Uint64(), d.Uint64()), nil
	}
	return bernExpBig(src, n, d), nil
}

// --- uint64 fast path -------------------------------------------------------

// bernRatio returns true with probability n/(d·k), for n ≤ d, d, k ≥ 1.
// When d·k overflows, it uses Bernoulli(n/d) ∧ Bernoulli(1/k), which has the
// same probability.
func bernRatio(src Source, n, d, k uint64) bool {
	hi, dk := bits.Mul64(d, k)
	if hi == 0 {
		return UniformUint64(src, dk) < n
	}
	return UniformUint64(src, d) < n && UniformUint64(src, k) == 0
}

// bernExpFrac returns true with probability exp(−n/d) for 0 ≤ n ≤ d, d ≥ 1
// (CKS20 Algorithm 1, case γ ∈ [0, 1]).
func bernExpFrac(src Source, n, d uint64) bool {
	if n == 0 {
		return true
	}
	k := uint64(1)
	for bernRatio(src, n, d, k) {
		k++
	}
	return k&1 == 1
}

// bernExp1 returns true with probability exp(−1). It is bernExpFrac(1, 1)
// with the first draw, Bernoulli(1/1), skipped since it always succeeds.
func bernExp1(src Source) bool {
	k := uint64(2)
	for UniformUint64(src, k) == 0 {
		k++
	}
	return k&1 == 1
}

// bernExp returns true with probability exp(−n/d) for d ≥ 1 (CKS20
// Algorithm 1): ⌊γ⌋ trials of Bernoulli(exp(−1)), stopping at the first
// failure, then one Bernoulli(exp(−(γ−⌊γ⌋))).
func bernExp(src Source, n, d uint64) bool {
	for q := n / d; q > 0; q-- {
		if !bernExp1(src) {
			return false
		}
	}
	return bernExpFrac(src, n%d, d)
}

// --- math/big path ------------------------------------------------------------

var bigOne = big.NewInt(1)

// bernRatioBig returns true with probability n/d, 0 ≤ n ≤ d, d ≥ 1.
func bernRatioBig(src Source, n, d *big.Int) bool {
	return uniformBig(src, d).Cmp(n) < 0
}

// bernExpFracBig returns true with probability exp(−n/d), 0 ≤ n ≤ d, d ≥ 1.
func bernExpFracBig(src Source, n, d *big.Int) bool {
	if n.Sign() == 0 {
		return true
	}
	k := int64(1)
	dk := new(big.Int).Set(d)
	kb := new(big.Int)
	for bernRatioBig(src, n, dk) {
		k++
		dk.Mul(d, kb.SetInt64(k))
	}
	return k&1 == 1
}

// bernExpBig returns true with probability exp(−n/d), n ≥ 0, d ≥ 1.
func bernExpBig(src Source, n, d *big.Int) bool {
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	for i := new(big.Int); i.Cmp(q) < 0; i.Add(i, bigOne) {
		if !bernExp1(src) {
			return false
		}
	}
	return bernExpFracBig(src, r, d)
}
