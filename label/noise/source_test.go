package noise

import (
	"crypto/aes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"math/bits"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestSeededSourceDeterminism(t *testing.T) {
	const n = 2000 // crosses several 4 KiB refills
	draw := func(seed, stream uint64) []uint64 {
		s := NewSeededSource(seed, stream)
		out := make([]uint64, n)
		for i := range out {
			out[i] = s.Uint64()
		}
		return out
	}
	base := draw(42, 0)
	tests := []struct {
		name         string
		seed, stream uint64
		same         bool
	}{
		{name: "same seed and stream", seed: 42, stream: 0, same: true},
		{name: "other stream", seed: 42, stream: 1},
		{name: "other seed", seed: 43, stream: 0},
		{name: "stream as seed", seed: 0, stream: 42},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := draw(tc.seed, tc.stream)
			equal := 0
			for i := range got {
				if got[i] == base[i] {
					equal++
				}
			}
			if tc.same && equal != n {
				t.Errorf("%d of %d words equal, want all", equal, n)
			}
			if !tc.same && equal != 0 {
				t.Errorf("%d of %d words equal, want none", equal, n)
			}
		})
	}
}

// TestSeededSourceConstruction checks the documented construction against
// crypto/aes directly: block i of stream s is AES_k(s ‖ i) with
// k = SHA-256("pate/noise" ‖ seed), seed and s big-endian.
func TestSeededSourceConstruction(t *testing.T) {
	tests := []struct {
		name         string
		seed, stream uint64
	}{
		{name: "zero", seed: 0, stream: 0},
		{name: "seed 7 stream 3", seed: 7, stream: 3},
		{name: "max", seed: math.MaxUint64, stream: math.MaxUint64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in []byte
			in = append(in, "pate/noise"...)
			in = binary.BigEndian.AppendUint64(in, tc.seed)
			key := sha256.Sum256(in)
			block, err := aes.NewCipher(key[:])
			if err != nil {
				t.Fatal(err)
			}
			src := NewSeededSource(tc.seed, tc.stream)
			for i := uint64(0); i < 600; i++ { // 600 blocks: past two refills
				var ctr, ks [16]byte
				binary.BigEndian.PutUint64(ctr[:8], tc.stream)
				binary.BigEndian.PutUint64(ctr[8:], i)
				block.Encrypt(ks[:], ctr[:])
				for h := 0; h < 2; h++ {
					want := binary.LittleEndian.Uint64(ks[8*h:])
					if got := src.Uint64(); got != want {
						t.Fatalf("block %d word %d: got %#x, want %#x", i, h, got, want)
					}
				}
			}
		})
	}
}

// TestSourceBits checks that every bit position of each source is fair
// (within 6 standard errors) and that the crypto source is not constant.
func TestSourceBits(t *testing.T) {
	tests := []struct {
		name string
		src  Source
	}{
		{name: "crypto", src: NewCryptoSource()},
		{name: "seeded", src: NewSeededSource(1, 2)},
	}
	const n = 100_000
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ones [64]int
			seen := make(map[uint64]bool, n)
			for range n {
				v := tc.src.Uint64()
				seen[v] = true
				for b := range 64 {
					ones[b] += int(v >> b & 1)
				}
			}
			if len(seen) < n-1 {
				t.Errorf("%d distinct words in %d draws", len(seen), n)
			}
			se := math.Sqrt(n / 4.0)
			for b, c := range ones {
				if math.Abs(float64(c)-n/2) > 6*se {
					t.Errorf("bit %d set %d times in %d draws", b, c, n)
				}
			}
		})
	}
}

// counterSource returns a fixed sequence of words, then repeats it.
type counterSource struct {
	words []uint64
	i     int
}

func (c *counterSource) Uint64() uint64 {
	v := c.words[c.i%len(c.words)]
	c.i++
	return v
}

func TestUniformUint64(t *testing.T) {
	t.Run("n=0 is a full word", func(t *testing.T) {
		src := &counterSource{words: []uint64{0xdeadbeefcafe}}
		if got := UniformUint64(src, 0); got != 0xdeadbeefcafe {
			t.Errorf("got %#x", got)
		}
	})
	t.Run("n=1", func(t *testing.T) {
		src := NewSeededSource(1, 1)
		for range 1000 {
			if got := UniformUint64(src, 1); got != 0 {
				t.Fatalf("got %d", got)
			}
		}
	})
	t.Run("rejects the biased low words", func(t *testing.T) {
		// n = 2^63+1: 2^64 mod n = 2^63−1, so a word w whose low product
		// w·n mod 2^64 is below 2^63−1 must be rejected. w = 1 gives
		// lo = n ≥ threshold (accepted, hi = 0); w = 2 gives lo = 2 (rejected).
		n := uint64(1)<<63 + 1
		src := &counterSource{words: []uint64{2, 1}}
		if got := UniformUint64(src, n); got != 0 || src.i != 2 {
			t.Errorf("got %d after %d words, want 0 after 2", got, src.i)
		}
	})
	for _, n := range []uint64{3, 7, 10, 1000} {
		t.Run("chi-square/n="+big.NewInt(int64(n)).String(), func(t *testing.T) {
			src := NewSeededSource(11, n)
			const draws = 200_000
			counts := make([]float64, n)
			for range draws {
				v := UniformUint64(src, n)
				if v >= n {
					t.Fatalf("value %d ≥ %d", v, n)
				}
				counts[v]++
			}
			if p := uniformChiSquareP(counts, draws); p <= 0.001 {
				t.Errorf("p = %.3g", p)
			}
		})
	}
	t.Run("n=2^63+1 halves", func(t *testing.T) {
		n := uint64(1)<<63 + 1
		src := NewSeededSource(12, 0)
		const draws = 100_000
		var high float64
		for range draws {
			if UniformUint64(src, n) >= 1<<61 {
				high++
			}
		}
		// P(v ≥ 2^61) = (n − 2^61)/n ≈ 3/4.
		if se := math.Sqrt(draws * 0.75 * 0.25); math.Abs(high-0.75*draws) > 6*se {
			t.Errorf("%v of %d values in the upper three quarters", high, draws)
		}
	})
}

func uniformChiSquareP(counts []float64, draws int) float64 {
	e := float64(draws) / float64(len(counts))
	var stat float64
	for _, c := range counts {
		stat += (c - e) * (c - e) / e
	}
	return distuv.ChiSquared{K: float64(len(counts) - 1)}.Survival(stat)
}

func TestUniformBig(t *testing.T) {
	for _, n := range []*big.Int{nil, big.NewInt(0), big.NewInt(-5)} {
		if _, err := UniformBig(NewSeededSource(1, 1), n); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("UniformBig(%v): err = %v, want ErrInvalidParameter", n, err)
		}
	}
	tests := []struct {
		name  string
		n     *big.Int
		parts int // count values in this many equal parts of [0, n)
	}{
		{name: "10", n: big.NewInt(10), parts: 10},
		{name: "2^64", n: new(big.Int).Lsh(bigOne, 64), parts: 4},
		{name: "3·2^64", n: new(big.Int).Lsh(big.NewInt(3), 64), parts: 3},
		{name: "2^70+3", n: new(big.Int).Add(new(big.Int).Lsh(bigOne, 70), big.NewInt(3)), parts: 8},
		{name: "5^40", n: new(big.Int).Exp(big.NewInt(5), big.NewInt(40), nil), parts: 5},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := NewSeededSource(13, uint64(i))
			const draws = 100_000
			counts := make([]float64, tc.parts)
			k := big.NewInt(int64(tc.parts))
			part := new(big.Int)
			for range draws {
				v, err := UniformBig(src, tc.n)
				if err != nil {
					t.Fatal(err)
				}
				if v.Sign() < 0 || v.Cmp(tc.n) >= 0 {
					t.Fatalf("value %v outside [0, %v)", v, tc.n)
				}
				part.Mul(v, k).Quo(part, tc.n) // ⌊v·parts/n⌋
				counts[part.Int64()]++
			}
			// The parts differ in size by at most one integer: negligible here.
			if p := uniformChiSquareP(counts, draws); p <= 0.001 {
				t.Errorf("p = %.3g, counts %v", p, counts)
			}
		})
	}
}

func TestParseRat(t *testing.T) {
	tests := []struct {
		in   string
		want string // RatString, or "" for an error
	}{
		{in: "40", want: "40"},
		{in: "6.23", want: "623/100"},
		{in: "1e4", want: "10000"},
		{in: "1E4", want: "10000"},
		{in: "623/100", want: "623/100"},
		{in: "1246/200", want: "623/100"},
		{in: " 2.5e-3 ", want: "1/400"},
		{in: ".5", want: "1/2"},
		{in: "5.", want: "5"},
		{in: "-1.5", want: "-3/2"},
		{in: "+3", want: "3"},
		{in: "010/3", want: "10/3"}, // decimal, not octal
		{in: "0.1", want: "1/10"},
		{in: "-2/4", want: "-1/2"},
		{in: "1e400", want: "1" + string(make0s(400))},
		{in: ""},
		{in: "abc"},
		{in: "1/0"},
		{in: "1/-2"},
		{in: "0x10"},
		{in: "0b1"},
		{in: "1e401"},
		{in: "1e-100000000"},
		{in: "1/2/3"},
		{in: "1.2.3"},
		{in: "e5"},
		{in: "."},
		{in: "--1"},
		{in: "1e"},
		{in: "NaN"},
		{in: "Inf"},
		{in: "1_000"},
		{in: "4 0"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseRat(tc.in)
			if tc.want == "" {
				if !errors.Is(err, ErrInvalidParameter) {
					t.Fatalf("ParseRat(%q) = %v, %v; want ErrInvalidParameter", tc.in, r, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRat(%q): %v", tc.in, err)
			}
			if got := r.RatString(); got != tc.want {
				t.Errorf("ParseRat(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func make0s(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return b
}

func TestRatFromFloat(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{name: "half", in: 0.5, want: "1/2"},
		{name: "forty", in: 40, want: "40"},
		{name: "tenth", in: 0.1, want: "3602879701896397/36028797018963968"},
		{name: "negative", in: -2.25, want: "-9/4"},
		{name: "NaN", in: math.NaN()},
		{name: "+Inf", in: math.Inf(1)},
		{name: "-Inf", in: math.Inf(-1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := RatFromFloat(tc.in)
			if tc.want == "" {
				if !errors.Is(err, ErrInvalidParameter) {
					t.Fatalf("RatFromFloat(%v) = %v, %v; want ErrInvalidParameter", tc.in, r, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.RatString(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestBernRatioOverflow(t *testing.T) {
	// d·k overflows: the sampler must still return true with probability
	// n/(d·k). With d = 2^63, k = 4, n = d: P = 1/4.
	d := uint64(1) << 63
	if _, lo := bits.Mul64(d, 4); lo != 0 {
		t.Fatal("test premise: d·4 should wrap to 0")
	}
	r := &rng{src: NewSeededSource(17, 0)}
	const draws = 200_000
	var hits float64
	for range draws {
		if bernRatio(r, d, d, 4) {
			hits++
		}
	}
	if se := math.Sqrt(draws * 0.25 * 0.75); math.Abs(hits-draws/4) > 6*se {
		t.Errorf("%v hits in %d draws, want about %d", hits, draws, draws/4)
	}
}

func TestRNGUniform(t *testing.T) {
	// Boundaries of the 16-, 32- and 64-bit branches of rng.uniform.
	for _, n := range []uint64{1, 2, 3, 255, 256, 257, 1000, 1<<24 - 1, 1 << 24, 1<<24 + 1, 1<<40 + 7} {
		t.Run(big.NewInt(int64(n)).String(), func(t *testing.T) {
			r := &rng{src: NewSeededSource(23, n)}
			const draws = 200_000
			// One bin per value for small n; otherwise 16 parts, whose sizes
			// differ by at most one value in n/16 (negligible here).
			parts := n
			if n > 4096 {
				parts = 16
			}
			counts := make([]float64, parts)
			for range draws {
				v := r.uniform(n)
				if v >= n {
					t.Fatalf("value %d ≥ %d", v, n)
				}
				hi, lo := bits.Mul64(v, parts)
				q, _ := bits.Div64(hi, lo, n) // ⌊v·parts/n⌋
				counts[q]++
			}
			if parts == 1 {
				return
			}
			if p := uniformChiSquareP(counts, draws); p <= 0.001 {
				t.Errorf("p = %.3g, counts %v", p, counts)
			}
		})
	}
	t.Run("take", func(t *testing.T) {
		// take cuts bits low first from a word and refills when short.
		r := &rng{src: &counterSource{words: []uint64{0xfedcba9876543210, 0x0123456789abcdef}}}
		if v := r.take(4); v != 0x0 {
			t.Errorf("take(4) = %#x", v)
		}
		if v := r.take(32); v != 0x87654321 {
			t.Errorf("take(32) = %#x", v)
		}
		if v := r.take(28); v != 0xfedcba9 {
			t.Errorf("take(28) = %#x", v)
		}
		if v := r.take(1); v != 1 || r.nb != 63 {
			t.Errorf("take(1) after exhaustion = %#x with %d bits left", v, r.nb)
		}
	})
}

// TestCryptoSourceRekeys draws past one key's quota and checks the source
// took a fresh key from crypto/rand and kept producing distinct words.
func TestCryptoSourceRekeys(t *testing.T) {
	s := NewCryptoSource().(*cryptoSource)
	first := s.stream
	seen := make(map[uint64]bool, 1024)
	for i := 0; i < rekeyBytes/8+bufSize; i++ {
		v := s.Uint64()
		if i >= rekeyBytes/8 {
			if seen[v] {
				t.Fatalf("word %#x repeated after the rekey", v)
			}
			seen[v] = true
		}
	}
	if s.stream == first {
		t.Fatal("no rekey after 16 MiB of output")
	}
	if s.left <= 0 || s.left > rekeyBytes {
		t.Fatalf("left = %d after a rekey", s.left)
	}
}

// TestFillMatchesUint64: Fill gives the words successive Uint64 calls
// give, across the keystream's buffer refills and after single draws,
// and then Fill and Uint64 go on with the same words.
func TestFillMatchesUint64(t *testing.T) {
	for _, n := range []int{1, 7, bufSize / 8, bufSize/8 + 3, 3 * bufSize / 8, -2 * bufSize / 8, -(2*bufSize/8 + 5)} {
		// n < 0: -n words from a fresh source (whole buffers go straight
		// into dst).
		a, b := NewSeededSource(9, 2).(*seededSource), NewSeededSource(9, 2)
		if n > 0 {
			a.Uint64()
			b.Uint64()
		} else {
			n = -n
		}
		got := make([]uint64, n)
		a.Fill(got)
		for i, w := range got {
			if want := b.Uint64(); w != want {
				t.Fatalf("n %d: word %d is %x, Uint64 gives %x", n, i, w, want)
			}
		}
		if a.Uint64() != b.Uint64() {
			t.Fatalf("n %d: the streams part after Fill", n)
		}
		a.Fill(got)
		for i, w := range got {
			if w != b.Uint64() {
				t.Fatalf("n %d: word %d of a second Fill differs", n, i)
			}
		}
	}
}

// TestCryptoFillRekeys: Fill on the crypto source charges its keystream
// to the key as Uint64 does: after every fill the buffer position and the
// keystream left to the key are those the same number of Uint64 calls
// leave, so the key changes where Uint64's would.
func TestCryptoFillRekeys(t *testing.T) {
	tests := []struct {
		name  string
		steps []int // > 0: a Fill of that many words; < 0: that many Uint64 calls on both
	}{
		{"one word", []int{1}},
		{"a buffer", []int{bufSize / 8}},
		{"across buffers", []int{-3, 700, -1, 513}},
		{"a key's worth and more", []int{rekeyBytes/8 - 5, -10, 600}},
		{"three keys in one fill", []int{3*rekeyBytes/8 + 17}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := NewCryptoSource().(*cryptoSource) // word by word
			b := NewCryptoSource().(*cryptoSource) // by Fill
			for i, n := range tc.steps {
				if n < 0 {
					for range -n {
						a.Uint64()
						b.Uint64()
					}
				} else {
					for range n {
						a.Uint64()
					}
					b.Fill(make([]uint64, n))
				}
				if a.i != b.i || a.left != b.left {
					t.Fatalf("after step %d: Uint64 at (i %d, left %d), Fill at (i %d, left %d)", i, a.i, a.left, b.i, b.left)
				}
			}
		})
	}
}
