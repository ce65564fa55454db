package noise

import (
	"math"
	"math/big"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// floatExp returns exp(−num/den) computed independently of lazy.go:
// big.Float at 500 bits, exp(x) by its series of positive terms (relative
// error below 2^−480), then 1/exp(x).
func floatExp(num, den uint64) *big.Float {
	const prec = 500
	x := new(big.Float).SetPrec(prec).SetUint64(num)
	x.Quo(x, new(big.Float).SetPrec(prec).SetUint64(den))
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	rel := new(big.Float).SetPrec(prec)
	for i := int64(1); ; i++ {
		term.Mul(term, x)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(i))
		sum.Add(sum, term)
		// Stop when the term is below 2^−520 of the sum, past the peak.
		if rel.SetMantExp(sum, -520); term.Cmp(rel) < 0 && x.Cmp(new(big.Float).SetInt64(i)) < 0 {
			break
		}
	}
	return new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt64(1), sum)
}

// floatExpDigits returns the first k 64-bit digits of floatExp(num, den).
// It fails the test when a digit is too close to a digit boundary for the
// computation's precision to decide it.
func floatExpDigits(t *testing.T, num, den uint64, k int) []uint64 {
	t.Helper()
	p := floatExp(num, den)
	prec := p.Prec()
	digits := make([]uint64, k)
	mask := new(big.Int).SetUint64(math.MaxUint64)
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := range digits {
		scaled := new(big.Float).SetPrec(prec).SetMantExp(p, 64*(i+1))
		n, _ := scaled.Int(nil)
		frac := new(big.Float).SetPrec(prec).Sub(scaled, new(big.Float).SetPrec(prec).SetInt(n))
		errBound := new(big.Float).SetPrec(prec).SetMantExp(scaled, -450)
		if frac.Cmp(errBound) <= 0 || new(big.Float).SetPrec(prec).Sub(one, frac).Cmp(errBound) <= 0 {
			t.Fatalf("exp(−%d/%d): digit %d is too close to a boundary", num, den, i+1)
		}
		digits[i] = n.And(n, mask).Uint64()
	}
	return digits
}

func TestExpDigits(t *testing.T) {
	tests := []struct {
		name     string
		num, den uint64
		known    []uint64 // digits from mpmath at 600 bits, a third computation
	}{
		{name: "e^-1", num: 1, den: 1, known: []uint64{0x5e2d58d8b3bcdf1a, 0xbadec7829054f90d, 0xda9805aab56c7733}},
		{name: "e^-1/41", num: 1, den: 41, known: []uint64{0xf9d4e58891b55dd1, 0x76a87267c14608e9, 0xbc515290d454004f}},
		{name: "e^-40/41", num: 40, den: 41, known: []uint64{0x60809c1581995e9f, 0x77ed8551bd2673b7, 0x56a40fee2f3eec58}},
		{name: "e^-45", num: 45, den: 1, known: []uint64{0, 0x872db9e8ffa9e7d4, 0x1f2aaf39897b91e4}},
		{name: "e^-1/3", num: 1, den: 3},
		{name: "e^-7/3", num: 7, den: 3},
		{name: "e^-2^-40", num: 1, den: 1 << 40},
		{name: "e^-40", num: 40, den: 1},
		// γ(6) at σ = 6.23 = 623/100, t = 7: (6·q²t − p²)²/(2p²q²t²).
		{name: "gamma sigma=6.23 y=6", num: (6*70000 - 388129) * (6*70000 - 388129), den: 2 * 388129 * 10000 * 49},
		{name: "e^-300", num: 300, den: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := floatExpDigits(t, tc.num, tc.den, 5)
			for i, d := range tc.known {
				if want[i] != d {
					t.Fatalf("test reference: digit %d = %#x by big.Float, %#x by mpmath", i+1, want[i], d)
				}
			}
			n, d := new(big.Int).SetUint64(tc.num), new(big.Int).SetUint64(tc.den)
			for k := range want {
				if got := expDigit(n, d, uint(k+1)); got != want[k] {
					t.Errorf("digit %d = %#x, want %#x", k+1, got, want[k])
				}
			}
			// The interval brackets exp(−x)·2^prec at several precisions.
			p := floatExp(tc.num, tc.den)
			for _, prec := range []uint{8, 64, 200, 300} {
				lo, hi := expNegInterval(n, d, prec)
				v := new(big.Float).SetMantExp(p, int(prec))
				if new(big.Float).SetInt(lo).Cmp(v) > 0 || new(big.Float).SetInt(hi).Cmp(v) < 0 {
					t.Errorf("prec %d: [%v, %v] does not bracket %v", prec, lo, hi, v)
				}
				if w := new(big.Int).Sub(hi, lo); w.BitLen() > 8 {
					t.Errorf("prec %d: interval %v wide", prec, w)
				}
			}
		})
	}
}

// TestLazyTables checks every table entry (a stride of them for the large
// tables) against the independent big.Float digits.
func TestLazyTables(t *testing.T) {
	t.Run("geometric", func(t *testing.T) {
		for j, d := range geoTable {
			if want := floatExpDigits(t, uint64(j+1), 1, 1)[0]; d != want {
				t.Errorf("e^-%d: %#x, want %#x", j+1, d, want)
			}
			if j > 0 && d >= geoTable[j-1] || d == 0 {
				t.Errorf("e^-%d: %#x is not in (0, %#x): the table must decrease strictly", j+1, d, geoTable[j-1])
			}
			if geoTop[j] != d>>48 {
				t.Errorf("geoTop[%d] = %#x, want %#x", j, geoTop[j], d>>48)
			}
		}
	})
	for _, tt := range []uint64{1, 3, 5, 7, 20, 41, 201, 257, 4096} {
		t.Run("laplace t="+big.NewInt(int64(tt)).String(), func(t *testing.T) {
			tab := laplaceTable(tt)
			if uint64(len(tab)) != tt || tab[0] != math.MaxUint64 {
				t.Fatalf("table of %d entries starting %#x, want %d starting 2^64−1", len(tab), tab[0], tt)
			}
			stride := max(1, tt/97)
			for u := uint64(1); u < tt; u += stride {
				if want := floatExpDigits(t, u, tt, 1)[0]; tab[u] != want {
					t.Errorf("exp(−%d/%d): %#x, want %#x", u, tt, tab[u], want)
				}
			}
		})
	}
	if laplaceTable(maxLaplaceTable+1) != nil {
		t.Error("a table above maxLaplaceTable")
	}
	tests := []struct {
		sigma  string
		capped bool // the table stops at maxGaussianTable
	}{
		{sigma: "0.5"}, {sigma: "0.7"}, {sigma: "6.23"}, {sigma: "40"}, {sigma: "200"},
		{sigma: "1000", capped: true}, {sigma: "1e4", capped: true},
	}
	for _, tc := range tests {
		t.Run("gaussian sigma="+tc.sigma, func(t *testing.T) {
			g := mustGaussian(t, tc.sigma)
			if tc.capped != (len(g.acc) == maxGaussianTable) {
				t.Fatalf("%d entries, capped %v", len(g.acc), tc.capped)
			}
			stride := max(1, len(g.acc)/211)
			check := func(a int) {
				if want := floatExpDigits(t, g.gammaNum(uint64(a)), g.den, 1)[0]; g.acc[a] != want {
					t.Errorf("exp(−γ(%d)): %#x, want %#x", a, g.acc[a], want)
				}
			}
			for a := 0; a < len(g.acc); a += stride {
				check(a)
			}
			check(len(g.acc) - 1)
			if g.acc[len(g.acc)-1] == 0 {
				t.Errorf("the last entry has first digit 0")
			}
			// The first entry past a short table has a zero first digit:
			// every proposal left to bernExp is accepted with p < 2^−64.
			if a := uint64(len(g.acc)); a < maxGaussianTable {
				if d := floatExpDigits(t, g.gammaNum(a), g.den, 1)[0]; d != 0 {
					t.Errorf("exp(−γ(%d)) past the table has first digit %#x, want 0", a, d)
				}
			}
		})
	}
}

// scriptSource returns the given words in order and fails the test when
// more are asked for.
type scriptSource struct {
	t     *testing.T
	words []uint64
	i     int
}

func (s *scriptSource) Uint64() uint64 {
	if s.i >= len(s.words) {
		s.t.Fatalf("the script of %d words ran out", len(s.words))
	}
	s.i++
	return s.words[s.i-1]
}

// firstWord returns the word whose bits the rng hands out as take(16),
// take(16), take(32) — in that order — to make up the 64-bit value w.
func firstWord(w uint64) uint64 {
	return w>>48 | (w>>32&0xffff)<<16 | w<<32
}

// TestLazyTies forces the ties U_1 = D_1 (and U_2 = D_2) with scripted words,
// so that the digits computed beyond the tables decide, and checks those
// digits against the independent big.Float ones.
func TestLazyTies(t *testing.T) {
	type bern struct {
		name     string
		num, den uint64
		d1       uint64 // the table's first digit
	}
	g40 := mustGaussian(t, "40")
	lap41 := laplaceTable(41)
	cases := []bern{
		{name: "laplace exp(−17/41)", num: 17, den: 41, d1: lap41[17]},
		{name: "laplace exp(−40/41)", num: 40, den: 41, d1: lap41[40]},
		{name: "gaussian sigma=40 y=3", num: g40.gammaNum(3), den: g40.den, d1: g40.acc[3]},
		{name: "gaussian sigma=40 y=300", num: g40.gammaNum(300), den: g40.den, d1: g40.acc[300]},
		{name: "geometric e^-2", num: 2, den: 1, d1: geoTable[1]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			digits := floatExpDigits(t, tc.num, tc.den, 3)
			if digits[0] != tc.d1 {
				t.Fatalf("table digit %#x, want %#x", tc.d1, digits[0])
			}
			d2, d3 := digits[1], digits[2]
			if d2 == 0 || d2 == math.MaxUint64 || d3 == 0 || d3 == math.MaxUint64 {
				t.Fatalf("digits %#x, %#x: pick other scripted words", d2, d3)
			}
			scripts := []struct {
				words []uint64 // after the first word
				want  bool
			}{
				{words: []uint64{d2 - 1}, want: true},
				{words: []uint64{d2 + 1}, want: false},
				{words: []uint64{d2, d3 - 1}, want: true},
				{words: []uint64{d2, d3 + 1}, want: false},
				{words: []uint64{d2 - 1 - d2/2}, want: true},
			}
			for i, sc := range scripts {
				src := &scriptSource{t: t, words: append([]uint64{firstWord(tc.d1)}, sc.words...)}
				if got := lazyBernExp(&rng{src: src}, tc.d1, tc.num, tc.den); got != sc.want {
					t.Errorf("script %d: %v, want %v", i, got, sc.want)
				}
				if src.i != len(src.words) {
					t.Errorf("script %d: %d of %d words used", i, src.i, len(src.words))
				}
			}
			// A first word off by one in its low bits decides at once.
			for _, w := range []uint64{tc.d1 - 1, tc.d1 + 1} {
				src := &scriptSource{t: t, words: []uint64{firstWord(w)}}
				if got := lazyBernExp(&rng{src: src}, tc.d1, tc.num, tc.den); got != (w < tc.d1) {
					t.Errorf("first word %#x: %v", w, got)
				}
			}
		})
	}
}

// TestLazyTiesGeometric forces ties in the geometric draw of exp(−1) steps.
func TestLazyTiesGeometric(t *testing.T) {
	t.Run("geometric", func(t *testing.T) {
		// X's first 64 bits tie with e^{−j}'s first digit; the second word
		// decides between v = j and v = j − 1.
		for j := 1; j <= geoLen; j++ {
			d := geoTable[j-1]
			d2 := floatExpDigits(t, uint64(j), 1, 2)[1]
			if d2 == 0 || d2 == math.MaxUint64 {
				t.Fatalf("e^-%d: second digit %#x, pick other scripted words", j, d2)
			}
			for _, tc := range []struct {
				second uint64
				want   uint64
			}{{d2 - 1, uint64(j)}, {d2 + 1, uint64(j - 1)}} {
				words := []uint64{firstWord(d), tc.second}
				if j == geoLen && tc.want == geoLen {
					// v ≥ geoLen: v − geoLen is drawn afresh, here 0.
					words = append(words, 0xffff)
				}
				src := &scriptSource{t: t, words: words}
				r := &rng{src: src}
				b := r.take(16) // the caller's first 16 bits of X
				if got := geometricExp1(r, b); got != tc.want {
					t.Errorf("j = %d, second word %#x: v = %d, want %d", j, tc.second, got, tc.want)
				}
				if src.i != len(words) {
					t.Errorf("j = %d: %d of %d words used", j, src.i, len(words))
				}
			}
		}
	})
	t.Run("geometric beyond the table", func(t *testing.T) {
		// X's first word 0 is below every e^{−j}, j ≤ geoLen: v ≥ geoLen,
		// and v − geoLen is drawn afresh: 0 again (v ≥ 2·geoLen), then a
		// first word just above e^{−2}'s (so X ∈ (e^{−2}, e^{−1})): + 1.
		src := &scriptSource{t: t, words: []uint64{0, 0, firstWord(geoTable[1] + 1)}}
		r := &rng{src: src}
		if got, want := geometricExp1(r, r.take(16)), uint64(2*geoLen+1); got != want {
			t.Errorf("v = %d, want %d", got, want)
		}
	})

}

// TestLazyTiesLaplaceSample scripts a discrete Laplace sample whose
// acceptance ties with its table digit, decided by the word after it.
func TestLazyTiesLaplaceSample(t *testing.T) {
	// DiscreteLaplace(41): the low 16 bits of the first word give u = 17
	// by Lemire's method (27180·41 = 17·2^16 + 268), its high 16 bits
	// tie with the acceptance digit, and so do the 48 bits after them
	// (the next 16 of w1, the low 32 of w2); the third word, X's second,
	// decides against D_2.
	l := mustLaplace(t, "41")
	d := l.acc[17]
	d2 := floatExpDigits(t, 17, 41, 2)[1]
	for _, tc := range []struct {
		second uint64
		want   int64
		words  int
	}{
		// Accepted: the high half of w2 gives the geometric's bits
		// 0xffff (v = 0) and sign 0: y = 17.
		{second: d2 - 1, want: 17, words: 3},
		// Rejected: the high half of w2 is the next proposal, u = 40
		// (0xffff·41 = 40·2^16 + 65495) with acceptance bits 0 (below
		// every digit); w4 gives v = 0 and sign 0: y = 40.
		{second: d2 + 1, want: 40, words: 4},
	} {
		w1 := 27180 | (d>>48)<<16 | (d>>32&0xffff)<<32
		w2 := d&0xffffffff | 0xffff<<32
		w4 := uint64(0xffff)
		src := &scriptSource{t: t, words: []uint64{w1, w2, tc.second, w4}}
		if got := l.Sample(src); got != tc.want || src.i != tc.words {
			t.Errorf("second word %#x: sample %d from %d words, want %d from %d", tc.second, got, src.i, tc.want, tc.words)
		}
	}
}

// TestLazyTiesGaussianSample scripts a discrete Gaussian sample whose
// acceptance ties with its table digit, decided by the word after it.
func TestLazyTiesGaussianSample(t *testing.T) {
	// DiscreteGaussian(40), t = 41: the low half of w1 is the proposal
	// u = 17 with acceptance bits 0; its high half has the geometric's
	// bits 0xffff (v = 0), sign 0 and, in its top 15 bits, the spare
	// bits that start the Gaussian acceptance's X: they tie with the
	// top 15 bits of exp(−γ(17))'s first digit d, and w2's next 17 + 32
	// bits tie with the rest of d; the third word decides against D_2.
	g := mustGaussian(t, "40")
	d := g.acc[17]
	d2 := floatExpDigits(t, g.gammaNum(17), g.den, 2)[1]
	for _, tc := range []struct {
		second uint64
		want   int64
		words  int
	}{
		{second: d2 - 1, want: 17, words: 3},
		// Rejected: w4 proposes u = 40 (accepted, v = 0, sign 0) with
		// spare bits 0, below exp(−γ(40))'s digit: y = 40.
		{second: d2 + 1, want: 40, words: 4},
	} {
		z := 0xffff | (d>>49)<<17
		w1 := 27180 | z<<32
		w2 := d>>32&(1<<17-1) | (d&0xffffffff)<<17
		w4 := uint64(0xffff | 0xffff<<32)
		src := &scriptSource{t: t, words: []uint64{w1, w2, tc.second, w4}}
		if got := g.Sample(src); got != tc.want || src.i != tc.words {
			t.Errorf("second word %#x: sample %d from %d words, want %d from %d", tc.second, got, src.i, tc.want, tc.words)
		}
	}
}

// TestLazyBernoulliMatchesCKS20 draws Bernoulli(exp(−γ)) by lazy comparison
// and by CKS20's Algorithm 1 (bernExp) for several γ: both must agree with
// exp(−γ), and with each other, within 5 standard errors.
func TestLazyBernoulliMatchesCKS20(t *testing.T) {
	g40 := mustGaussian(t, "40")
	tests := []struct {
		name     string
		num, den uint64
	}{
		{name: "1/41", num: 1, den: 41},
		{name: "20/41", num: 20, den: 41},
		{name: "40/41", num: 40, den: 41},
		{name: "1", num: 1, den: 1},
		{name: "7/3", num: 7, den: 3},
		{name: "4", num: 4, den: 1},
		{name: "gamma(0) sigma=40", num: g40.gammaNum(0), den: g40.den},
		{name: "gamma(100) sigma=40", num: g40.gammaNum(100), den: g40.den},
	}
	n := draws(200_000)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d1 := expDigit(new(big.Int).SetUint64(tc.num), new(big.Int).SetUint64(tc.den), 1)
			lazySrc, refSrc := NewSeededSource(41, uint64(i)), NewSeededSource(42, uint64(i))
			var lazy, ref int
			for range n {
				if lazyBernExp(&rng{src: lazySrc}, d1, tc.num, tc.den) {
					lazy++
				}
				if bernExp(&rng{src: refSrc}, tc.num, tc.den) {
					ref++
				}
			}
			p := math.Exp(-float64(tc.num) / float64(tc.den))
			se := math.Sqrt(p * (1 - p) / float64(n))
			pl, pr := float64(lazy)/float64(n), float64(ref)/float64(n)
			t.Logf("exp(−γ) = %.5f, lazy %.5f, CKS20 %.5f", p, pl, pr)
			if math.Abs(pl-p) > 5*se || math.Abs(pr-p) > 5*se || math.Abs(pl-pr) > 5*math.Sqrt2*se {
				t.Errorf("exp(−γ) = %.5f ± %.5f: lazy %.5f, CKS20 %.5f", p, 5*se, pl, pr)
			}
		})
	}

	t.Run("geometric", func(t *testing.T) {
		// v against P(v = j) = (1 − e^{−1})·e^{−j}, by χ², for geometricExp1
		// and for the CKS20 loop of bernExp1.
		const bins = 8 // 0…6 and ≥ 7
		exact := make([]float64, bins)
		for j := range bins - 1 {
			exact[j] = (1 - math.Exp(-1)) * math.Exp(-float64(j))
		}
		exact[bins-1] = math.Exp(-float64(bins - 1))
		samplers := []struct {
			name string
			f    func(r *rng) uint64
		}{
			{"lazy", func(r *rng) uint64 { return geometricExp1(r, r.take(16)) }},
			{"CKS20", func(r *rng) uint64 {
				var v uint64
				for bernExp1(r) {
					v++
				}
				return v
			}},
		}
		for _, dr := range samplers {
			name, f := dr.name, dr.f
			src := NewSeededSource(43, 0)
			counts := make([]float64, bins)
			for range n {
				counts[min(f(&rng{src: src}), bins-1)]++
			}
			var stat float64
			for j, c := range counts {
				e := exact[j] * float64(n)
				stat += (c - e) * (c - e) / e
			}
			p := distuv.ChiSquared{K: bins - 1}.Survival(stat)
			t.Logf("%s: χ² = %.1f, p = %.3f", name, stat, p)
			if p <= 0.001 {
				t.Errorf("%s: χ² = %.1f with %d df, p = %.2g", name, stat, bins-1, p)
			}
		}
	})
}
