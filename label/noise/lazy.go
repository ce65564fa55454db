package noise

import (
	"math"
	"math/big"
)

// Lazy exact comparison against exp(−x).
//
// Bernoulli(p) is the event X < p for X = Σ_{k≥1} U_k·2^{−64k} uniform on
// [0, 1), the U_k independent uniform 64-bit words. Write p's binary
// expansion in 64-bit digits, p = Σ_{k≥1} D_k·2^{−64k} with
// D_k = ⌊p·2^{64k}⌋ mod 2^64. For p = exp(−x) with x > 0 rational, p is
// irrational (Lindemann), so its expansion is unique and never ends in all
// ones, and X < p iff the word sequence (U_1, U_2, …) is lexicographically
// below (D_1, D_2, …) (X = p has probability 0). The comparison therefore
// draws U_1: U_1 < D_1 → true, U_1 > D_1 → false, U_1 = D_1 → the same with
// U_2 against D_2, and so on. It returns true with probability exactly p as
// long as every D_k used is p's exact digit, and it stops after k words with
// probability 1 − 2^{−64(k−1)}·(1 − 2^{−64}).
//
// The first digits live in tables built when a sampler is constructed; the
// later ones (needed with probability 2^{−64} per comparison) are computed on
// demand by expTail. Every digit comes from a rigorous interval: integers
// lo ≤ exp(−x)·2^N ≤ hi computed with big.Int arithmetic rounded outwards
// (expNegInterval, or interval products for the tables), and a digit is used
// only when ⌊lo/2^g⌋ = ⌊hi/2^g⌋, which then equals ⌊exp(−x)·2^{N−g}⌋. When an
// interval is too wide to decide, the digit is recomputed at a higher
// precision; since exp(−x)·2^{64k} is never an integer, that terminates.
// Nothing on this path is a floating-point number (DESIGN.md, invariant 5).
//
// x = 0 (p = 1) is the one case with no 64-bit first digit: its table entry
// is 2^64 − 1 and expTail accepts, so U_1 < 2^64 − 1 accepts and U_1 = 2^64 − 1
// accepts too: probability 1.

const (
	// tableBits is the fixed-point precision of the table recurrences: far
	// more than the 64 bits of a first digit, so that the rounding of a few
	// thousand interval products rarely leaves a digit undecided.
	tableBits = 128
	// maxLaplaceTable bounds the scale numerator t for which a sampler keeps a
	// table of the t acceptance digits of exp(−u/t), u ∈ [0, t).
	maxLaplaceTable = 4096
	// maxGaussianTable bounds the Gaussian acceptance table (|y| < 8192: it
	// covers every proposal with a non-zero first digit up to σ ≈ 780).
	maxGaussianTable = 8192
	// geoLen is the number of first digits of e^{−j}, j = 1…geoLen, in
	// geoTable. They are strictly decreasing: (e^{−j} − e^{−j−1})·2^64 > 1 for
	// j ≤ 43, so consecutive ones cannot share a floor.
	geoLen = 40
)

// geoTable[j−1] is the first 64-bit digit of e^{−j}, j = 1…geoLen, and
// geoTop[j−1] its top 16 bits.
var (
	geoTable = geometricTable()
	geoTop   = func() (top [geoLen]uint64) {
		for j, d := range geoTable {
			top[j] = d >> 48
		}
		return top
	}()
)

// expTail finishes a lazy comparison of X against exp(−num/den) after its
// first words tied with the first digit: it compares U_2, U_3, … with the
// digits D_2, D_3, … of exp(−num/den), computed exactly. For num = 0
// (p = 1) it returns true. Called with probability 2^{−64} per comparison.
func expTail(r *rng, num, den uint64) bool {
	if num == 0 {
		return true
	}
	n, d := new(big.Int).SetUint64(num), new(big.Int).SetUint64(den)
	for k := uint(2); ; k++ {
		dk := expDigit(n, d, k)
		if w := r.src.Uint64(); w != dk {
			return w < dk
		}
	}
}

// lazyBernExp returns true with probability exp(−num/den), given d1, the
// first 64-bit digit of exp(−num/den) (2^64 − 1 when num = 0).
//
// The first 64 bits of X are drawn in pieces from the rng's cached word: the
// top 16 bits b are compared with the top 16 bits of d1, and only on a tie
// (probability 2^{−16}) are the other 48 drawn (lazyBernExpRest). This is
// the same lexicographic comparison, one chunk at a time: with c the top 16
// bits of d1, b < c gives X < (b+1)·2^{−16} ≤ d1·2^{−64} ≤ p, and b > c gives
// X ≥ b·2^{−16} ≥ (d1+1)·2^{−64} > p.
func lazyBernExp(r *rng, d1, num, den uint64) bool {
	if b, c := r.take(16), d1>>48; b != c {
		return b < c
	}
	return lazyBernExpRest(r, d1, num, den, 16)
}

// lazyBernExpRest finishes a lazy comparison after the top k ∈ [1, 32] bits
// of X tied with those of d1: it draws the other 64 − k bits of X's first
// word, then expTail.
func lazyBernExpRest(r *rng, d1, num, den uint64, k uint) bool {
	w := d1&^(1<<(64-k)-1) | r.take(32-k)<<32 | r.take(32)
	if w != d1 {
		return w < d1
	}
	return expTail(r, num, den)
}

// geometricExp1 returns v with P(v ≥ j) = e^{−j}, j ≥ 0: the number of
// successes of Bernoulli(e^{−1}) before the first failure, as in CKS20
// Algorithm 2, from one uniform X: v = max{j : X < e^{−j}}. b holds the top
// 16 bits of X, fresh random bits from the caller; the others are drawn
// lazily, rarely.
//
// Let b be the top 16 bits of X and c_j = geoTable[j−1]>>48 = ⌊e^{−j}·2^16⌋.
// b < c_j means X < e^{−j} and b > c_j means X > e^{−j}; the scan counts the
// j with b < c_j and stops at the first j with b ≥ c_j. On a tie b = c_j the
// comparison goes on with w, X's first 64 bits (the 48 others drawn now),
// against the 64-bit digits from that j on, where again w < geoTable[j−1]
// means X < e^{−j} and w > geoTable[j−1] means X > e^{−j}; if
// w = geoTable[j−1], expTail decides X < e^{−j} with the later words of X,
// and X > e^{−(j+1)} holds anyway, since the table is strictly decreasing:
// X ≥ w·2^{−64} ≥ (geoTable[j] + 1)·2^{−64} > e^{−(j+1)}.
//
// When X < e^{−geoLen} (probability e^{−40}) v ≥ geoLen, and v − geoLen is
// drawn afresh by the same procedure: the geometric law is memoryless,
// P(v ≥ geoLen + i | v ≥ geoLen) = e^{−i}, and X is used for nothing else,
// so the result has exactly the law of v.
func geometricExp1(r *rng, b uint64) uint64 {
	var v uint64
	for {
		j := 0
		for j < geoLen && b < geoTop[j] {
			j++
		}
		if j < geoLen && b == geoTop[j] {
			j = geometricRest(r, b, j)
		}
		v += uint64(j)
		if j < geoLen {
			return v
		}
		b = r.take(16)
	}
}

// geometricRest finishes geometricExp1's scan at j after X's top 16 bits b
// tied with those of geoTable[j].
func geometricRest(r *rng, b uint64, j int) int {
	w := b<<48 | r.take(16)<<32 | r.take(32)
	for j < geoLen && w < geoTable[j] {
		j++
	}
	if j < geoLen && w == geoTable[j] && expTail(r, uint64(j+1), 1) {
		j++
	}
	return j
}

// --- exact digits ---------------------------------------------------------------

// expNegInterval returns integers lo ≤ exp(−num/den)·2^prec ≤ hi, for
// num ≥ 0, den ≥ 1. The width shrinks to 0 as prec grows.
//
// With y = x/2^s ≤ 1, the terms y^k/k! of exp(−y) = Σ (−y)^k/k! do not
// increase, so every odd partial sum is below exp(−y) and every even one
// above. Each term is bounded below (floor) and above (ceiling) in fixed
// point at w = prec + s + 16 bits, the sums combine the bounds in the
// direction that keeps them bounds, and exp(−x) = exp(−y)^{2^s} is bounded
// by squaring the non-negative bounds s times, rounding outwards.
func expNegInterval(num, den *big.Int, prec uint) (lo, hi *big.Int) {
	if num.Sign() == 0 {
		one := new(big.Int).Lsh(bigOne, prec)
		return one, new(big.Int).Set(one)
	}
	var s uint
	if num.Cmp(den) > 0 {
		// den·2^s ≥ 2^{bitlen(den)−1+s} ≥ 2^{bitlen(num)} > num.
		s = uint(num.BitLen() - den.BitLen() + 1)
	}
	w := prec + s + 16
	dy := new(big.Int).Lsh(den, s) // y = num/dy ∈ (0, 1]

	tl := new(big.Int).Lsh(bigOne, w) // bounds of the k-th term, ·2^w
	th := new(big.Int).Set(tl)
	evenL, evenH := new(big.Int).Set(tl), new(big.Int).Set(th) // Σ even-k term bounds
	oddL, oddH := new(big.Int), new(big.Int)                   // Σ odd-k term bounds
	div, kb, rem := new(big.Int), new(big.Int), new(big.Int)
	k := int64(0)
	for {
		k++
		div.Mul(dy, kb.SetInt64(k))
		tl.Mul(tl, num)
		tl.Quo(tl, div)
		th.Mul(th, num)
		th.QuoRem(th, div, rem)
		if rem.Sign() != 0 {
			th.Add(th, bigOne)
		}
		if k&1 == 1 {
			oddL.Add(oddL, tl)
			oddH.Add(oddH, th)
		} else {
			evenL.Add(evenL, tl)
			evenH.Add(evenH, th)
		}
		if th.Cmp(bigOne) <= 0 {
			break
		}
	}
	// S_k ∈ [evenL − oddH, evenH − oddL]; S_{k−1} = S_k ∓ t_k.
	sLo := new(big.Int).Sub(evenL, oddH)
	sHi := new(big.Int).Sub(evenH, oddL)
	pLo, pHi := new(big.Int).Set(sLo), new(big.Int).Set(sHi) // S_{k−1}
	if k&1 == 1 {
		pLo.Add(pLo, tl)
		pHi.Add(pHi, th)
		lo, hi = sLo, pHi // S_k odd is below, S_{k−1} even above
	} else {
		pLo.Sub(pLo, th)
		pHi.Sub(pHi, tl)
		lo, hi = pLo, sHi
	}
	if lo.Sign() < 0 {
		lo.SetInt64(0)
	}
	ones := new(big.Int).Sub(new(big.Int).Lsh(bigOne, w), bigOne)
	for range s {
		lo.Mul(lo, lo)
		lo.Rsh(lo, w)
		hi.Mul(hi, hi)
		hi.Add(hi, ones)
		hi.Rsh(hi, w)
	}
	lo.Rsh(lo, w-prec)
	hi.Add(hi, ones.Rsh(ones, prec)) // 2^{w−prec} − 1: round up
	hi.Rsh(hi, w-prec)
	return lo, hi
}

// expDigit returns D_k = ⌊exp(−num/den)·2^{64k}⌋ mod 2^64, the k-th 64-bit
// digit of exp(−num/den), for num ≥ 1, den ≥ 1, k ≥ 1. It refines the
// interval until both ends give the same digit; exp(−num/den)·2^{64k} is
// irrational, so the loop ends.
func expDigit(num, den *big.Int, k uint) uint64 {
	mask := new(big.Int).SetUint64(math.MaxUint64)
	for g := uint(32); ; g *= 2 {
		lo, hi := expNegInterval(num, den, 64*k+g)
		lo.Rsh(lo, g)
		hi.Rsh(hi, g)
		if lo.Cmp(hi) == 0 {
			return lo.And(lo, mask).Uint64()
		}
	}
}

// fixedInterval holds integers lo ≤ v·2^tableBits ≤ hi for a value v ≥ 0.
type fixedInterval struct{ lo, hi, tmp big.Int }

// tableOnes is 2^tableBits − 1, added before a right shift to round up.
var tableOnes = new(big.Int).Sub(new(big.Int).Lsh(bigOne, tableBits), bigOne)

func expFixed(num, den *big.Int) *fixedInterval {
	lo, hi := expNegInterval(num, den, tableBits)
	z := new(fixedInterval)
	z.lo.Set(lo)
	z.hi.Set(hi)
	return z
}

// mul sets z to bounds of z·x, rounding outwards (both are non-negative).
func (z *fixedInterval) mul(x *fixedInterval) {
	z.lo.Rsh(z.tmp.Mul(&z.lo, &x.lo), tableBits)
	z.tmp.Mul(&z.hi, &x.hi)
	z.hi.Rsh(z.tmp.Add(&z.tmp, tableOnes), tableBits)
}

// digit1 returns the first 64-bit digit of v if the interval decides it.
func (z *fixedInterval) digit1(tmp *big.Int) (uint64, bool) {
	tmp.Rsh(&z.hi, tableBits-64)
	if !tmp.IsUint64() {
		return 0, false
	}
	d := tmp.Uint64()
	tmp.Rsh(&z.lo, tableBits-64)
	return d, tmp.IsUint64() && tmp.Uint64() == d
}

// below2to64 reports whether the interval proves v < 2^−64 (first digit 0).
func (z *fixedInterval) below2to64(tmp *big.Int) bool {
	return tmp.Rsh(&z.hi, tableBits-64).Sign() == 0
}

// firstDigit returns the first 64-bit digit of exp(−num/den) from z, its
// bounds, or recomputed exactly when z does not decide it. num ≥ 1.
func firstDigit(z *fixedInterval, num, den *big.Int, tmp *big.Int) uint64 {
	if d, ok := z.digit1(tmp); ok {
		return d
	}
	return expDigit(num, den, 1)
}

// geometricTable returns the first digits of e^{−j}, j = 1…geoLen, from the
// products e^{−j} = e^{−1}·e^{−(j−1)} of rigorous bounds.
func geometricTable() []uint64 {
	tab := make([]uint64, geoLen)
	one := big.NewInt(1)
	e1 := expFixed(one, one)
	e := new(fixedInterval)
	e.lo.Set(&e1.lo)
	e.hi.Set(&e1.hi)
	tmp, jb := new(big.Int), new(big.Int)
	for j := range tab {
		if j > 0 {
			e.mul(e1)
		}
		tab[j] = firstDigit(e, jb.SetInt64(int64(j+1)), one, tmp)
	}
	return tab
}

// laplaceTable returns the first digits of exp(−u/t), u ∈ [0, t), from
// exp(−u/t) = exp(−1/t)^u (entry 0 is 2^64 − 1, standing for p = 1), or nil
// when t > maxLaplaceTable.
func laplaceTable(t uint64) []uint64 {
	if t == 0 || t > maxLaplaceTable {
		return nil
	}
	tab := make([]uint64, t)
	tab[0] = math.MaxUint64
	tb := new(big.Int).SetUint64(t)
	b := expFixed(bigOne, tb)
	e := new(fixedInterval)
	e.lo.Set(&b.lo)
	e.hi.Set(&b.hi)
	tmp, ub := new(big.Int), new(big.Int)
	for u := uint64(1); u < t; u++ {
		if u > 1 {
			e.mul(b)
		}
		tab[u] = firstDigit(e, ub.SetUint64(u), tb, tmp)
	}
	return tab
}

// gaussianTable returns the first digits of exp(−γ(a)), γ(a) = (a·q2t − p2)²/den,
// for a = 0, 1, …, up to (excluding) the first a above σ²/t whose first digit
// is 0 (γ(a) > 44), at most maxGaussianTable entries, and only while γ(a)'s
// numerator fits in 64 bits (the fast path's condition).
//
// With a0 = ⌈p2/q2t⌉ (γ decreases up to a0 − 1 and increases from a0), the
// entries come from two recurrences of interval products with factors ≤ 1:
// upwards E(a+1) = E(a)·F(a), F(a) = exp(−q2t·(2(a·q2t − p2) + q2t)/den),
// F(a+1) = F(a)·R; downwards E(a−1) = E(a)·G(a),
// G(a) = exp(−q2t·(2(p2 − a·q2t) + q2t)/den), G(a−1) = G(a)·R; with
// R = exp(−2·q2t²/den) = exp(−1/σ²). The start values are computed directly.
func gaussianTable(p2, q2t, den uint64) []uint64 {
	P2, Q, D := new(big.Int).SetUint64(p2), new(big.Int).SetUint64(q2t), new(big.Int).SetUint64(den)
	a0 := p2 / q2t
	if p2%q2t != 0 {
		a0++
	}
	// gammaNum sets z to (a·q2t − p2)² and reports whether it fits the fast path.
	gammaNum := func(z *big.Int, a uint64) bool {
		z.SetUint64(a)
		z.Mul(z, Q)
		z.Sub(z, P2)
		z.Mul(z, z)
		return z.IsUint64()
	}
	// step sets z to q2t·(2·|a·q2t − p2| + q2t), the numerator of F(a) or G(a).
	step := func(z *big.Int, a uint64) *big.Int {
		z.SetUint64(a)
		z.Mul(z, Q)
		z.Sub(z, P2)
		z.Abs(z)
		z.Lsh(z, 1)
		z.Add(z, Q)
		return z.Mul(z, Q)
	}
	r := expFixed(new(big.Int).Lsh(new(big.Int).Mul(Q, Q), 1), D)
	num, tmp := new(big.Int), new(big.Int)

	down := min(a0, maxGaussianTable)
	tab := make([]uint64, down, max(down, min(maxGaussianTable, 2*down+64)))
	if down > 0 {
		a := down - 1
		gammaNum(num, a) // fits: |a·q2t − p2| ≤ p2 and p2² < den
		e := expFixed(num, D)
		g := expFixed(step(new(big.Int), a), D)
		for {
			if num.Sign() == 0 {
				tab[a] = math.MaxUint64
			} else {
				tab[a] = firstDigit(e, num, D, tmp)
			}
			if a == 0 {
				break
			}
			e.mul(g)
			g.mul(r)
			a--
			gammaNum(num, a)
		}
	}
	if a0 >= maxGaussianTable || !gammaNum(num, a0) {
		return tab
	}
	e := expFixed(num, D)
	f := expFixed(step(new(big.Int), a0), D)
	for a := a0; a < maxGaussianTable; a++ {
		if a > a0 {
			e.mul(f)
			f.mul(r)
			if !gammaNum(num, a) {
				break
			}
		}
		if e.below2to64(tmp) {
			break
		}
		if num.Sign() == 0 {
			tab = append(tab, math.MaxUint64)
			continue
		}
		d := firstDigit(e, num, D, tmp)
		if d == 0 {
			break
		}
		tab = append(tab, d)
	}
	return tab
}
