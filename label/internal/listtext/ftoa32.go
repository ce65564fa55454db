// The shortest-digit steps in this file (in formatList32 and
// shortestPow2) follow Go's internal/strconv/ftoadbox.go, Copyright 2025
// The Go Authors, used under the BSD-style licence in GO_LICENSE beside
// this file.

package listtext

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
)

// formatList32 writes, from buf[n] on, the text of each of v's values
// followed by a comma, and returns the n after the last comma; buf must
// have room (capacity) for maxLen32+1 bytes a value from n on, as it
// writes scratch past the text.
//
// A value's text is goccy/go-json's AppendFloat32 (the JSON Arrow's
// ValueStr gives a float32),
//
//	strconv.AppendFloat(nil, float64(x), f, -1, 32)
//
// with f 'e' when 0 < |x| < 1e-6 or |x| >= 1e21 and 'f' otherwise, byte
// for byte, and strconv's "NaN", "+Inf" and "-Inf". A row's partition
// identity hashes this text when the row has a null element, so a
// differing byte would move rows between teachers;
// TestAppendFloat32Sampled and TestAppendFloat32Exhaustive hold it to
// strconv. The digits are shortest32's (strconv's own
// Dragonbox core) with strconv's generic formatting taken out: they are
// made eight at a time in a word and stored straight into their places in
// the one form this text uses.
func formatList32(buf []byte, n int, v []float32) int {
	buf = buf[:cap(buf)]
	for _, x := range v {
		p := (*[maxLen32]byte)(buf[n : n+maxLen32])
		u := math.Float32bits(x)
		abs := u &^ (1 << 31)
		i := int(u >> 31)
		p[0] = '-' // overwritten when x >= 0
		exp := int(abs >> mantBits32)
		mant := abs & (1<<mantBits32 - 1)
		var k int // the text's length
		switch {
		case abs == 0:
			p[i] = '0'
			k = i + 1
		case exp == 0xff && mant != 0:
			k = copy(p[:], "NaN")
		case exp == 0xff:
			k = i + copy(p[i:], "+Inf"[i:]) // "-Inf" with the "-" written
		default:
			d, e10 := shortest32(exp, mant)
			nd := decimalLen32(d)
			dp := nd + e10 // the decimal point's place: x = 0.digits × 10^dp

			// The nd digits, first digit first, in 16 bytes (zero bytes after).
			var lo, hi uint64
			if nd <= 8 {
				lo = digits8(d) >> (8 * uint(8-nd) & 63)
			} else {
				q := d / 1e8
				w := digits8(d - q*1e8)
				lo, hi = uint64('0'+q)|w<<8, w>>56
			}

			switch {
			case abs-bits1e_6 >= bits1e21-bits1e_6: // |x| < 1e-6 or |x| >= 1e21
				k = formatExp32(p, i, lo, hi, nd, dp)
			case dp <= 0:
				// 0.000ddd: at most five zeros after the point, as |x| >= 1e-6.
				put16(p, i, zeroPoint, 0)
				k = i + 2 - dp
				put16(p, k, lo, hi)
				k += nd
			case dp < nd:
				// ddd.ddd: all the digits, then the fraction's again one
				// place on (dp is 1 to 7: from 2^23 on a float32 is whole).
				put16(p, i, lo, hi)
				sh := 8 * uint(dp) & 63
				put16(p, i+dp+1, lo>>sh|hi<<(64-sh), hi>>sh)
				p[(i+dp)&15] = '.'
				k = i + 1 + nd
			default:
				// ddd000: no fraction, at most 21 places as |x| < 1e21.
				put16(p, i, lo, hi)
				k = i + dp
				for j := i + nd; j < k; j++ {
					p[j] = '0'
				}
			}
		}
		p[k&(maxLen32-1)] = ','
		n += k + 1
	}
	return n
}

// shortest32 returns the shortest decimal d·10^e10 that reads back as
// the finite, non-zero float32 with biased exponent exp and stored
// mantissa mant (of equally short ones, strconv's): strconv's dboxFtoa32
// with decimalSlice taken out and its arithmetic kept (which branch,
// which rounding, which zeros are trimmed), but for what depends on the
// exponent alone, looked up in expTab32.
func shortest32(exp int, mant uint32) (d uint32, e10 int) {
	if exp == 0 {
		exp = 1 // subnormal
	} else {
		mant |= 1 << mantBits32
	}
	if mant == 1<<mantBits32 && exp > 1 {
		d, e10 = shortestPow2(exp - 127 - mantBits32)
	} else {
		// Algorithm 5.2, κ = 1 for float32.
		t := &expTab32[uint8(exp)]
		φ, β, δi := t.φ, uint(t.β), t.δi
		zi, _ := bits.Mul64(uint64((mant*2+1)<<(β&31))<<32, φ)
		s, r := uint32(zi>>32)/100, uint32(zi>>32)%100
		found := false // in the larger interval: trim its zeros
		switch {
		case r < δi:
			if found = r != 0 || uint32(zi) != 0 || mant%2 == 0; !found {
				s--
				r = 100
			}
		case r == δi:
			parity, exact := parity32(mant*2-1, φ, β)
			found = parity || (exact && mant%2 == 0)
		}
		if found {
			d, e10 = trimZeros32(s)
			e10 += int(t.negK0) + 1
		} else {
			// Algorithm 5.4.
			D := r + 10/2 - δi/2
			d, e10 = 10*s+D/10, int(t.negK0)
			if D%10 == 0 {
				if parity, exact := parity32(mant*2, φ, β); parity != ((D-10/2)%2 != 0) || exact && d%2 != 0 {
					d--
				}
			}
		}
	}
	return d, e10
}

// Float64 returns the float64 that x's shortest text reads as,
//
//	strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
//
// without the text: the value a float32 stands for when it is compared
// with numbers of other types (the ledger reads a float32 0.1 as the
// float64 0.1, as a CSV's "0.1" is read). The digits are shortest32's; d
// has at most nine, so d and 10^|e10| are exact float64s for |e10| <= 22
// and one multiplication or division rounds their product correctly
// (Clinger's fast path); other exponents go through strconv.
func Float64(x float32) float64 {
	u := math.Float32bits(x)
	abs := u &^ (1 << 31)
	exp := int(abs >> mantBits32)
	if abs == 0 || exp == 0xff {
		return float64(x) // ±0, ±Inf, NaN
	}
	d, e10 := shortest32(exp, abs&(1<<mantBits32-1))
	var f float64
	switch {
	case e10 >= 0 && e10 <= 22:
		f = float64(d) * exactPow10[e10]
	case e10 < 0 && e10 >= -22:
		f = float64(d) / exactPow10[-e10]
	default:
		b := strconv.AppendUint(make([]byte, 0, 16), uint64(d), 10)
		b = strconv.AppendInt(append(b, 'e'), int64(e10), 10)
		f, _ = strconv.ParseFloat(string(b), 64) // in range: x's value
	}
	if u>>31 != 0 {
		f = -f
	}
	return f
}

// From64 returns the float32 x with Float64(x) == y, and whether there
// is one. It is float32(y) or, when y's shortest decimal lies next to the
// midpoint between two float32s, its neighbour towards y: reading that
// decimal as a float64 and the float64 as a float32 rounds twice, and can
// land on the float32 past the midpoint (0x15ae43fd's text,
// "7.038531e-26", does), where strconv's float32 reading rounds once.
func From64(y float64) (float32, bool) {
	x := float32(y)
	if Float64(x) == y {
		return x, true
	}
	to := float32(math.Inf(1))
	if float64(x) > y {
		to = -to
	}
	if n := math.Nextafter32(x, to); Float64(n) == y {
		return n, true
	}
	return 0, false
}

// exactPow10 holds 10^0 to 10^22, the powers of ten a float64 holds
// exactly.
var exactPow10 = [23]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// formatExp32 writes d.ddde±XX for the nd digits in lo and hi and the
// decimal point's place dp at p[i:], returning the end: float32's decimal
// exponents, -45 to 38, are two digits.
func formatExp32(p *[maxLen32]byte, i int, lo, hi uint64, nd, dp int) int {
	put16(p, i+1, lo, hi)
	end := i + 1
	if p[i] = p[i+1]; nd > 1 {
		p[i+1] = '.'
		end = i + 1 + nd
	}
	x := dp - 1
	p[end], p[end+1] = 'e', '+'
	if x < 0 {
		p[end+1] = '-'
		x = -x
	}
	p[end+2], p[end+3] = digitPairs[2*x], digitPairs[2*x+1]
	return end + 4
}

// put16 stores lo and hi's 16 bytes, little-endian, at buf[p:], p < 16
// (which lets the compiler drop the bounds checks).
func put16(buf *[maxLen32]byte, p int, lo, hi uint64) {
	b := buf[p&15:]
	le.PutUint64(b, lo)
	le.PutUint64(b[8:], hi)
}

var le = binary.LittleEndian

const (
	mantBits32 = 23
	// maxLen32 bounds what formatList32 writes for a value, text and
	// scratch: "-", "0.", five zeros and 16 bytes of digits, or "-" and
	// 21 digits.
	maxLen32 = 32
	// bits1e_6 and bits1e21 are the bits of float32(1e-6) and
	// float32(1e21), the JSON cut-offs, so that comparing |x|'s bits is
	// comparing |x| with them as float32s.
	bits1e_6 = 0x358637bd
	bits1e21 = 0x6258d727
	// zeroPoint is "0.000000" as a little-endian word.
	zeroPoint = 0x3030303030302e30
)

// digits8 returns the eight decimal digits of x < 10^8, leading zeros
// included, as ASCII in a little-endian word: x's halves, quarters and
// digits are split in parallel lanes of the word, by multiplying with
// reciprocals exact for numbers that small.
func digits8(x uint32) uint64 {
	hi, lo := x/10000, x%10000
	w := uint64(hi) | uint64(lo)<<32
	q := (w * 10486 >> 20) & (0x7f<<32 | 0x7f) // each half / 100
	w = q | (w-100*q)<<16
	q = (w * 103 >> 10) & (0xf<<48 | 0xf<<32 | 0xf<<16 | 0xf) // each quarter / 10
	w = q | (w-10*q)<<8
	return w + 0x3030303030303030
}

// digitPairs holds "00" to "99", to write two digits at a time.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// shortestPow2 is formatList32's shortest digits d·10^e10 for a normal
// power of two, 2^exp·2^23 with exp unbiased less 23, whose lower
// neighbour is nearer than its upper one: strconv's dboxFtoa32 there
// (Algorithm 5.6).
func shortestPow2(exp int) (d uint32, e10 int) {
	k0 := -((exp*631305 - 261663) >> 21)
	φ, β := pow10Of32(k0, exp)
	xi := uint32((φ - (φ >> (mantBits32 + 2))) >> (64 - mantBits32 - 1 - β))
	zi := uint32((φ + (φ >> (mantBits32 + 1))) >> (64 - mantBits32 - 1 - β))
	if exp != 2 && exp != 3 {
		xi++
	}
	if q := zi / 10; xi <= q*10 {
		q, zeros := trimZeros32(q)
		return q, -k0 + 1 + zeros
	}
	yru := uint32(φ>>(64-mantBits32-2-β)+1) / 2
	if exp == -77 && yru%2 != 0 {
		yru--
	} else if yru < xi {
		yru++
	}
	return yru, -k0
}

// expTab32[exp] holds, for the biased exponent exp of a float32 that is
// not a power of two (1 for subnormals too), what Algorithm 5.2 works
// out from exp alone: φ̃k for k = κ + k0, k0 = -⌊e·log10 2⌋ with e =
// exp-150, the shift β, δ^(i) and -k0.
var expTab32 = func() (t [256]struct {
	φ     uint64
	δi    uint32
	β     uint8
	negK0 int8
}) {
	for exp := 1; exp < 0xff; exp++ {
		e := exp - 127 - mantBits32
		k0 := -((e * 78913) >> 18)
		φ, β := pow10Of32(1+k0, e)
		x := &t[exp]
		x.φ, x.β, x.negK0 = φ, uint8(β), int8(-k0)
		x.δi = uint32(φ >> (64 - 1 - β))
	}
	return t
}()

// pow10Of32 returns φ̃k, 10^k's 64-bit significand rounded up, and β,
// the shift of the binary exponent e that goes with it.
func pow10Of32(k, e int) (φ uint64, β uint) {
	return pow10Tab32[uint(k-pow10Min32)%uint(len(pow10Tab32))], uint(e + (k*108853)>>15)
}

// parity32 returns the parity of the integer part of m·φ/2^(64-β) and
// whether it is exact.
func parity32(m uint32, φ uint64, β uint) (parity, exact bool) {
	r := uint64(m) * φ
	return (r>>((64-β)&63))&1 != 0, uint32(r>>((32-β)&63)) == 0
}

// trimZeros32 returns x without its trailing decimal zeros and how many
// there were (x is never 0).
func trimZeros32(x uint32) (uint32, int) {
	p := 0
	for x%10 == 0 && p < 10 {
		x /= 10
		p++
	}
	return x, p
}

// decimalLen32 returns the number of decimal digits of x >= 1: x plus
// an entry for its binary length carries into the upper word exactly when
// x reaches the next power of ten (Lemire's digit count).
func decimalLen32(x uint32) int {
	return int((uint64(x) + digitCountTab[bits.Len32(x)]) >> 32)
}

// digitCountTab[j+1] is n<<32 for the n digits of 2^j, plus 2^32 - 10^n
// when 10^n < 2^(j+1).
var digitCountTab = func() (t [33]uint64) {
	for j := range 32 {
		n, p := uint64(1), uint64(10)
		for p <= 1<<j {
			n, p = n+1, p*10
		}
		t[j+1] = n << 32
		if p < 1<<(j+1) {
			t[j+1] += 1<<32 - p
		}
	}
	return t
}()

// pow10Min32 and pow10Max32 are the least and greatest k for which a
// float32 needs 10^k.
const pow10Min32, pow10Max32 = -31, 46

// pow10Tab32 holds ⌈10^k·2^(64-e)⌉ for k from -31 to 46, e = 1+⌊k·log2 10⌋:
// the upper 64 bits of strconv's pow10 table, rounded up where 10^k is not
// exact in them (k < 0 or k > 27), as strconv's dboxPow32 has them.
// TestPow10Tab32 recomputes them. The table is padded to 128 entries so
// that an index taken modulo 128 needs no bounds check.
var pow10Tab32 = [128]uint64{
	0x81ceb32c4b43fcf5, // 1e-31
	0xa2425ff75e14fc32, // 1e-30
	0xcad2f7f5359a3b3f, // 1e-29
	0xfd87b5f28300ca0e, // 1e-28
	0x9e74d1b791e07e49, // 1e-27
	0xc612062576589ddb, // 1e-26
	0xf79687aed3eec552, // 1e-25
	0x9abe14cd44753b53, // 1e-24
	0xc16d9a0095928a28, // 1e-23
	0xf1c90080baf72cb2, // 1e-22
	0x971da05074da7bef, // 1e-21
	0xbce5086492111aeb, // 1e-20
	0xec1e4a7db69561a6, // 1e-19
	0x9392ee8e921d5d08, // 1e-18
	0xb877aa3236a4b44a, // 1e-17
	0xe69594bec44de15c, // 1e-16
	0x901d7cf73ab0acda, // 1e-15
	0xb424dc35095cd810, // 1e-14
	0xe12e13424bb40e14, // 1e-13
	0x8cbccc096f5088cc, // 1e-12
	0xafebff0bcb24aaff, // 1e-11
	0xdbe6fecebdedd5bf, // 1e-10
	0x89705f4136b4a598, // 1e-9
	0xabcc77118461cefd, // 1e-8
	0xd6bf94d5e57a42bd, // 1e-7
	0x8637bd05af6c69b6, // 1e-6
	0xa7c5ac471b478424, // 1e-5
	0xd1b71758e219652c, // 1e-4
	0x83126e978d4fdf3c, // 1e-3
	0xa3d70a3d70a3d70b, // 1e-2
	0xcccccccccccccccd, // 1e-1
	0x8000000000000000, // 1e0
	0xa000000000000000, // 1e1
	0xc800000000000000, // 1e2
	0xfa00000000000000, // 1e3
	0x9c40000000000000, // 1e4
	0xc350000000000000, // 1e5
	0xf424000000000000, // 1e6
	0x9896800000000000, // 1e7
	0xbebc200000000000, // 1e8
	0xee6b280000000000, // 1e9
	0x9502f90000000000, // 1e10
	0xba43b74000000000, // 1e11
	0xe8d4a51000000000, // 1e12
	0x9184e72a00000000, // 1e13
	0xb5e620f480000000, // 1e14
	0xe35fa931a0000000, // 1e15
	0x8e1bc9bf04000000, // 1e16
	0xb1a2bc2ec5000000, // 1e17
	0xde0b6b3a76400000, // 1e18
	0x8ac7230489e80000, // 1e19
	0xad78ebc5ac620000, // 1e20
	0xd8d726b7177a8000, // 1e21
	0x878678326eac9000, // 1e22
	0xa968163f0a57b400, // 1e23
	0xd3c21bcecceda100, // 1e24
	0x84595161401484a0, // 1e25
	0xa56fa5b99019a5c8, // 1e26
	0xcecb8f27f4200f3a, // 1e27
	0x813f3978f8940985, // 1e28
	0xa18f07d736b90be6, // 1e29
	0xc9f2c9cd04674edf, // 1e30
	0xfc6f7c4045812297, // 1e31
	0x9dc5ada82b70b59e, // 1e32
	0xc5371912364ce306, // 1e33
	0xf684df56c3e01bc7, // 1e34
	0x9a130b963a6c115d, // 1e35
	0xc097ce7bc90715b4, // 1e36
	0xf0bdc21abb48db21, // 1e37
	0x96769950b50d88f5, // 1e38
	0xbc143fa4e250eb32, // 1e39
	0xeb194f8e1ae525fe, // 1e40
	0x92efd1b8d0cf37bf, // 1e41
	0xb7abc627050305ae, // 1e42
	0xe596b7b0c643c71a, // 1e43
	0x8f7e32ce7bea5c70, // 1e44
	0xb35dbf821ae4f38c, // 1e45
	0xe0352f62a19e306f, // 1e46
}
