package listtext

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// appendFloat32 appends formatList32's text of v to b.
func appendFloat32(b []byte, v float32) []byte {
	n0 := len(b)
	b = slices.Grow(b, maxLen32+1)
	n := formatList32(b, n0, []float32{v})
	return b[:n-1] // without the comma
}

// strconvFloat32 is the text appendFloat32 must give: goccy/go-json's
// AppendFloat32 rule on strconv, which the ledger's identities were made
// with.
func strconvFloat32(b []byte, v float32) []byte {
	format := byte('f')
	if abs := float32(math.Abs(float64(v))); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, float64(v), format, -1, 32)
}

// checkFloat32 reports whether appendFloat32 gives strconvFloat32's bytes
// for the float32 with bits u, appended after prefix, using got and want
// as scratch, and whether checkFloat64 holds for it; it returns got and
// want for reuse.
func checkFloat32(t testing.TB, u uint32, prefix string, got, want []byte) ([]byte, []byte, bool) {
	v := math.Float32frombits(u)
	got = appendFloat32(append(got[:0], prefix...), v)
	want = strconvFloat32(append(want[:0], prefix...), v)
	if !bytes.Equal(got, want) {
		t.Errorf("bits %#08x: appendFloat32 gives %q, strconv %q", u, got, want)
		return got, want, false
	}
	return got, want, checkFloat64(t, u)
}

// checkFloat64 reports whether Float64 gives the float64 that strconv
// reads the float32 with bits u's shortest text as, and whether, unless
// it is a NaN, From64 finds the float32 again from that float64: the
// ledger takes a float64 that it does for the float32 it stands for.
func checkFloat64(t testing.TB, u uint32) bool {
	x := math.Float32frombits(u)
	got := Float64(x)
	want, err := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	if err != nil {
		t.Errorf("bits %#08x: strconv: %v", u, err)
		return false
	}
	if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
		t.Errorf("bits %#08x: Float64 gives %v (%#016x), strconv %v (%#016x)", u, got, math.Float64bits(got), want, math.Float64bits(want))
		return false
	}
	if back, ok := From64(got); !math.IsNaN(got) && (!ok || math.Float32bits(back) != u) {
		t.Errorf("bits %#08x: From64(%v) gives bits %#08x, %v", u, got, math.Float32bits(back), ok)
		return false
	}
	return true
}

// TestAppendFloat32Cases: appendFloat32 gives strconv's bytes at the
// places where a hand-written formatter goes wrong: ±0, subnormals, the
// JSON cut-offs at 1e-6 and 1e21 and their neighbours, powers of two
// (Dragonbox's asymmetric interval), the largest float32, exact integers,
// NaN and ±Inf, and after text already in the buffer.
func TestAppendFloat32Cases(t *testing.T) {
	const bitsMax = 0x7f7fffff
	tests := []struct {
		name string
		bits uint32
	}{
		{"zero", 0},
		{"negative zero", 1 << 31},
		{"smallest subnormal", 1},
		{"negative smallest subnormal", 1<<31 | 1},
		{"largest subnormal", 1<<23 - 1},
		{"smallest normal", 1 << 23},
		{"below 1e-6", bits1e_6 - 1},
		{"1e-6", bits1e_6},
		{"above 1e-6", bits1e_6 + 1},
		{"negative 1e-6", 1<<31 | bits1e_6},
		{"below 1e21", bits1e21 - 1},
		{"1e21", bits1e21},
		{"above 1e21", bits1e21 + 1},
		{"largest", bitsMax},
		{"negative largest", 1<<31 | bitsMax},
		{"one", math.Float32bits(1)},
		{"minus one", math.Float32bits(-1)},
		{"0.1", math.Float32bits(0.1)},
		{"0.3", math.Float32bits(0.3)},
		{"2^24", math.Float32bits(1 << 24)},
		{"2^24+2", math.Float32bits(1<<24 + 2)},
		{"123456790", math.Float32bits(123456789)},
		{"1e20", math.Float32bits(1e20)},
		{"1e10", math.Float32bits(1e10)},
		{"1e-5", math.Float32bits(1e-5)},
		{"1e-7", math.Float32bits(1e-7)},
		{"1e-40", math.Float32bits(1e-40)},
		{"1e38", math.Float32bits(1e38)},
		{"2^-126", math.Float32bits(float32(math.Ldexp(1, -126)))},
		{"2^-125", math.Float32bits(float32(math.Ldexp(1, -125)))},
		{"2^127", math.Float32bits(float32(math.Ldexp(1, 127)))},
		{"2^-20", math.Float32bits(float32(math.Ldexp(1, -20)))},
		{"2^-19", math.Float32bits(float32(math.Ldexp(1, -19)))},
		{"2^-18", math.Float32bits(float32(math.Ldexp(1, -18)))},
		{"2^70", math.Float32bits(float32(math.Ldexp(1, 70)))},
		{"0.5", math.Float32bits(0.5)},
		{"1.5", math.Float32bits(1.5)},
		{"12.375", math.Float32bits(12.375)},
		{"100", math.Float32bits(100)},
		{"9.999999e-7", math.Float32bits(9.999999e-7)},
		{"+Inf", 0x7f800000},
		{"-Inf", 0xff800000},
		{"NaN", 0x7fc00000},
		{"negative NaN", 0xffc00001},
		{"text past the float64 midpoint", 0x15ae43fd},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, prefix := range []string{"", "[1,"} {
				checkFloat32(t, tc.bits, prefix, nil, nil)
			}
			// In a buffer with no room left, and with exactly the room
			// appendFloat32 asks for.
			full := make([]byte, 3, 3)
			checkFloat32(t, tc.bits, "", full[:0], nil)
			roomy := make([]byte, 0, maxLen32+1)
			checkFloat32(t, tc.bits, "", roomy, nil)
		})
	}
}

// TestAppendFloat32Sampled: appendFloat32 gives strconv's bytes on random
// mantissas at every exponent (subnormals and 0, all the normal ones, NaN
// and ±Inf) and both signs, and on the mantissas at either end of each:
// 8,000 patterns per exponent and sign, 4 million in all (400 per
// exponent with -short), with a fixed seed.
func TestAppendFloat32Sampled(t *testing.T) {
	perExp := 8000
	if testing.Short() {
		perExp = 400
	}
	rng := rand.New(rand.NewPCG(7, 11))
	edges := []uint32{0, 1, 2, 3, 1<<22 - 1, 1 << 22, 1<<22 + 1, 1<<23 - 2, 1<<23 - 1}
	var got, want []byte
	bad := 0
	for exp := uint32(0); exp <= 0xff; exp++ {
		for sign := uint32(0); sign < 2; sign++ {
			for j := 0; j < perExp; j++ {
				mant := rng.Uint32() & (1<<23 - 1)
				if j < len(edges) {
					mant = edges[j]
				}
				var ok bool
				prefix := ""
				if j%7 == 0 {
					prefix = "[0.5,"
				}
				if got, want, ok = checkFloat32(t, sign<<31|exp<<23|mant, prefix, got, want); !ok {
					if bad++; bad > 20 {
						t.Fatal("too many differences")
					}
				}
			}
		}
	}
}

// TestAppendFloat32Exhaustive: appendFloat32 gives strconv's bytes, and
// Float64 strconv's value, for every float32, all 2^32 bit patterns (NaN
// and ±Inf too). It takes minutes on all
// cores, so it runs only with PATE_EXHAUSTIVE=1:
//
//	PATE_EXHAUSTIVE=1 go test ./label/internal/listtext -run Exhaustive -timeout 2h -v
func TestAppendFloat32Exhaustive(t *testing.T) {
	if os.Getenv("PATE_EXHAUSTIVE") != "1" {
		t.Skip("set PATE_EXHAUSTIVE=1 to check all 2^32 float32 bit patterns")
	}
	start := time.Now()
	workers := runtime.GOMAXPROCS(0)
	const chunks = 1 << 12 // of 2^20 patterns each
	var next, bad, checked atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got, want []byte
			for {
				c := next.Add(1) - 1
				if c >= chunks || bad.Load() > 20 {
					return
				}
				n := int64(0)
				for x := uint64(c) << 20; x < uint64(c+1)<<20; x++ {
					var ok bool
					if got, want, ok = checkFloat32(t, uint32(x), "", got, want); !ok {
						bad.Add(1)
					}
					n++
				}
				checked.Add(n)
			}
		}()
	}
	wg.Wait()
	if want := int64(1 << 32); bad.Load() == 0 && checked.Load() != want {
		t.Fatalf("checked %d patterns, want %d", checked.Load(), want)
	}
	t.Logf("%d float32 bit patterns checked on %d workers in %v", checked.Load(), workers, time.Since(start).Round(time.Second))
}

// TestAppendFloat32Rows: Append writes a float32 row as strconv's texts
// of its values joined by commas, whatever the values next to each other
// (each value's scratch past its text is overwritten by the next), on
// rows of 0 to 40 values of any bits, with and without nulls, in lists and
// fixed-size lists, after text already in the buffer.
func TestAppendFloat32Rows(t *testing.T) {
	tests := []struct {
		name  string
		fixed bool
		nulls bool
	}{
		{"list", false, false},
		{"list with nulls", false, true},
		{"fixed_size_list", true, false},
		{"fixed_size_list with nulls", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(13, 17))
			const rows, fixedLen = 300, 24
			var lb array.ListLikeBuilder
			if tc.fixed {
				lb = array.NewFixedSizeListBuilder(mem, fixedLen, arrow.PrimitiveTypes.Float32)
			} else {
				lb = array.NewListBuilder(mem, arrow.PrimitiveTypes.Float32)
			}
			defer lb.Release()
			vb := lb.ValueBuilder().(*array.Float32Builder)
			want := make([]string, rows)
			for r := range rows {
				lb.Append(true)
				n := fixedLen
				if !tc.fixed {
					n = rng.IntN(41)
				}
				var text []byte
				text = append(text, '[')
				for j := range n {
					if j > 0 {
						text = append(text, ',')
					}
					if tc.nulls && rng.IntN(8) == 0 {
						vb.AppendNull()
						text = append(text, "null"...)
						continue
					}
					u := rng.Uint32()
					if rng.IntN(2) == 0 { // an embedding's magnitudes
						u = math.Float32bits(float32(rng.NormFloat64()))
					}
					vb.Append(math.Float32frombits(u))
					text = strconvFloat32(text, math.Float32frombits(u))
				}
				want[r] = string(append(text, ']'))
			}
			arr := lb.NewArray()
			defer arr.Release()
			a := arr.(array.ListLike)
			var got []byte
			for r := range rows {
				var ok bool
				if got, ok = Append(append(got[:0], "x,"...), a, r); !ok {
					t.Fatalf("row %d refused", r)
				}
				if string(got) != "x,"+want[r] {
					t.Fatalf("row %d: %q, want %q", r, got, "x,"+want[r])
				}
			}
		})
	}
}

// FuzzAppendFloat32 compares appendFloat32 with strconv on any bits.
func FuzzAppendFloat32(f *testing.F) {
	for _, u := range []uint32{0, 1 << 31, 1, bits1e_6, bits1e21 - 1, 0x7f7fffff, 0x3f800000, 0x00800000} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u uint32) {
		checkFloat32(t, u, "", nil, nil)
	})
}

// TestPow10Tab32 recomputes pow10Tab32 with math/big: ⌈10^k·2^(64-e)⌉,
// e = 1+⌊k·log2 10⌋, a 64-bit number, for every k a float32 needs.
func TestPow10Tab32(t *testing.T) {
	for k := pow10Min32; k <= pow10Max32; k++ {
		got := pow10Tab32[k-pow10Min32]
		e := 1 + (k*108853)>>15
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(k, -k))), nil)
		num, den := big.NewInt(1), big.NewInt(1)
		if k >= 0 {
			num.Set(p)
		} else {
			den.Set(p)
		}
		if s := 64 - e; s >= 0 {
			num.Lsh(num, uint(s))
		} else {
			den.Lsh(den, uint(-s))
		}
		q, r := new(big.Int).QuoRem(num, den, new(big.Int))
		if r.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		if q.BitLen() != 64 || q.Uint64() != got {
			t.Errorf("10^%d: table has %#x, want %#x", k, got, q)
		}
	}
	// The k formatList32 and shortestPow2 ask for: 1 - ⌊e·log10 2⌋ and the power-of-two
	// case's -⌊e·log10 2 - log10(4/3)⌋, for e from -149 to 104.
	for e := -149; e <= 104; e++ {
		for _, k := range []int{1 - (e*78913)>>18, -((e*631305 - 261663) >> 21)} {
			if k < pow10Min32 || k > pow10Max32 {
				t.Errorf("exponent %d needs 10^%d, outside the table", e, k)
			}
		}
	}
}

// BenchmarkAppend384 times Append on rows of 384 float32s spread as an
// embedding's are, the ledger's hashing of a private embedding column.
func BenchmarkAppend384(b *testing.B) {
	const rows, dim = 1024, 384
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	lb := array.NewFixedSizeListBuilder(mem, dim, arrow.PrimitiveTypes.Float32)
	defer lb.Release()
	vb := lb.ValueBuilder().(*array.Float32Builder)
	rng := rand.New(rand.NewPCG(3, 5))
	for range rows {
		lb.Append(true)
		for range dim {
			vb.Append(float32(rng.NormFloat64()))
		}
	}
	arr := lb.NewArray()
	defer arr.Release()
	a := arr.(array.ListLike)
	var text []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		text, _ = Append(text[:0], a, i%rows)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/dim, "ns/value")
}

// BenchmarkAppendFloat32 times appendFloat32 against strconv on single
// values of an embedding's spread.
func BenchmarkAppendFloat32(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 5))
	vals := make([]float32, 4096)
	for i := range vals {
		vals[i] = float32(rng.NormFloat64())
	}
	for _, bc := range []struct {
		name string
		put  func([]byte, float32) []byte
	}{{"listtext", appendFloat32}, {"strconv", strconvFloat32}} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			for i := 0; i < b.N; i++ {
				buf = bc.put(buf[:0], vals[i%len(vals)])
			}
		})
	}
}
