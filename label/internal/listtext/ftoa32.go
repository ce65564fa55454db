// The shortest-digit core of this file (shortest32) follows Go's
// internal/strconv/ftoadbox.go, Copyright 2025 The Go Authors, used under
// the BSD-style licence in GO_LICENSE beside this file.

package listtext

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
)

// appendFloat32 appends v as goccy/go-json's AppendFloat32 writes it (the
// JSON Arrow's ValueStr gives a float32):
//
//	strconv.AppendFloat(b, float64(v), f, -1, 32)
//
// with f 'e' when 0 < |v| < 1e-6 or |v| >= 1e21 and 'f' otherwise, byte
// for byte. The ledger hashes this text, so a differing byte would give a
// dataset a new identity and a fresh budget; TestAppendFloat32Sampled and
// TestAppendFloat32Exhaustive hold it to strconv. It is strconv's own
// Dragonbox core with strconv's generic formatting taken out: the digits
// are written straight into their places, two at a time, in the one form
// this text uses, which is what made strconv's call most of the cost of
// hashing 384-value float32 embeddings. NaN and ±Inf are left to strconv.
func appendFloat32(b []byte, v float32) []byte {
	u := math.Float32bits(v)
	abs := u &^ (1 << 31)
	exp := int(abs >> mantBits32)
	if exp == 0xff {
		return strconv.AppendFloat(b, float64(v), 'f', -1, 32)
	}
	n0 := len(b)
	b = slices.Grow(b, maxLen32)
	buf := b[n0 : n0+maxLen32]
	i := 0
	if u>>31 != 0 {
		buf[0] = '-'
		i = 1
	}
	if abs == 0 {
		buf[i] = '0'
		return b[:n0+i+1]
	}
	mant := abs & (1<<mantBits32 - 1)
	denorm := exp == 0
	if denorm {
		exp = 1
	} else {
		mant |= 1 << mantBits32
	}
	d, e10 := shortest32(mant, exp-127-mantBits32, denorm)
	nd := decimalLen32(d)
	dp := nd + e10 // the decimal point's place: v = 0.digits × 10^dp

	if abs < bits1e_6 || abs >= bits1e21 {
		// d.ddde±XX: float32's decimal exponents, -45 to 38, are two digits.
		putDigits(buf, i+1+nd, d)
		end := i + 1
		if buf[i] = buf[i+1]; nd > 1 {
			buf[i+1] = '.'
			end = i + 1 + nd
		}
		x := dp - 1
		buf[end], buf[end+1] = 'e', '+'
		if x < 0 {
			buf[end+1] = '-'
			x = -x
		}
		buf[end+2], buf[end+3] = digitPairs[2*x], digitPairs[2*x+1]
		return b[:n0+end+4]
	}
	switch {
	case dp <= 0:
		// 0.000ddd: at most five zeros after the point, as |v| >= 1e-6.
		copy(buf[i:], "0.000000")
		end := i + 2 - dp + nd
		putDigits(buf, end, d)
		return b[:n0+end]
	case dp < nd:
		// ddd.ddd: the digits one place on, then the integer ones back.
		end := i + 1 + nd
		putDigits(buf, end, d)
		copy(buf[i:i+dp], buf[i+1:i+1+dp])
		buf[i+dp] = '.'
		return b[:n0+end]
	default:
		// ddd000: no fraction, at most 21 places as |v| < 1e21.
		putDigits(buf, i+nd, d)
		end := i + dp
		for j := i + nd; j < end; j++ {
			buf[j] = '0'
		}
		return b[:n0+end]
	}
}

const (
	mantBits32 = 23
	// maxLen32 bounds appendFloat32's text: "-" and 21 integer digits.
	maxLen32 = 32
	// bits1e_6 and bits1e21 are the bits of float32(1e-6) and
	// float32(1e21), the JSON cut-offs, so that comparing |v|'s bits is
	// comparing |v| with them as float32s.
	bits1e_6 = 0x358637bd
	bits1e21 = 0x6258d727
)

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

// shortest32 returns the shortest decimal d·10^e10 that reads back as the
// float32 mant·2^exp (strconv's choice among equally short ones), for
// mant and exp as strconv's genericFtoa passes them to dboxFtoa32: mant
// with its implicit bit, exp unbiased less the 23 mantissa bits, denorm
// for a subnormal. It is dboxFtoa32 with decimalSlice taken out and the
// arithmetic kept: which branch, which rounding, which zeros are trimmed.
func shortest32(mant uint32, exp int, denorm bool) (d uint32, e10 int) {
	if mant == 1<<mantBits32 && !denorm {
		// A power of two: its lower neighbour is nearer (Algorithm 5.6).
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

	// κ = 1 for float32 (Algorithm 5.2).
	k0 := -((exp * 78913) >> 18)
	φ, β := pow10Of32(1+k0, exp)
	zi, exact := mulPow32((mant*2+1)<<β, φ)
	s, r := zi/100, zi%100
	δi := uint32(φ >> (64 - 1 - β))
	if r < δi {
		if r != 0 || !exact || mant%2 == 0 {
			s, zeros := trimZeros32(s)
			return s, -k0 + 1 + zeros
		}
		s--
		r = 100
	} else if r == δi {
		if parity, exact := parity32(mant*2-1, φ, β); parity || (exact && mant%2 == 0) {
			s, zeros := trimZeros32(s)
			return s, -k0 + 1 + zeros
		}
	}

	// Algorithm 5.4.
	D := r + 10/2 - δi/2
	t, ρ := D/10, D%10
	yru := 10*s + t
	if ρ == 0 {
		if parity, exact := parity32(mant*2, φ, β); parity != ((D-10/2)%2 != 0) || exact && yru%2 != 0 {
			yru--
		}
	}
	return yru, -k0
}

// pow10Of32 returns φ̃k, 10^k's 64-bit significand rounded up, and β,
// the shift of the binary exponent e that goes with it.
func pow10Of32(k, e int) (φ uint64, β uint) {
	return pow10Tab32[k-pow10Min32], uint(e + (k*108853)>>15)
}

// mulPow32 returns the integer part of u·φ/2^64 and whether it is exact.
func mulPow32(u uint32, φ uint64) (uint32, bool) {
	r := uint64(u)*(φ>>32) + (uint64(u)*uint64(uint32(φ)))>>32
	return uint32(r >> 32), uint32(r) == 0
}

// parity32 returns the parity of the integer part of m·φ/2^(64-β) and
// whether it is exact.
func parity32(m uint32, φ uint64, β uint) (parity, exact bool) {
	r := uint64(m) * φ
	return (r>>(64-β))&1 != 0, uint32(r>>(32-β)) == 0
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

// decimalLen32 returns the number of decimal digits of x >= 1.
func decimalLen32(x uint32) int {
	t := (bits.Len32(x) * 1233) >> 12
	if x < pow10u32[t] {
		return t
	}
	return t + 1
}

var pow10u32 = [...]uint32{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// putDigits writes the decimal digits of d >= 1 to buf, ending before
// buf[end].
func putDigits(buf []byte, end int, d uint32) {
	for d >= 100 {
		q := d / 100
		r := 2 * (d - 100*q)
		end -= 2
		buf[end], buf[end+1] = digitPairs[r], digitPairs[r+1]
		d = q
	}
	if d >= 10 {
		buf[end-2], buf[end-1] = digitPairs[2*d], digitPairs[2*d+1]
		return
	}
	buf[end-1] = byte('0' + d)
}

// pow10Min32 is the least k for which a float32 needs 10^k.
const pow10Min32 = -31

// pow10Tab32 holds ⌈10^k·2^(64-e)⌉ for k from -31 to 46, e = 1+⌊k·log2 10⌋:
// the upper 64 bits of strconv's pow10 table, rounded up where 10^k is not
// exact in them (k < 0 or k > 27), as strconv's dboxPow32 has them.
// TestPow10Tab32 recomputes them.
var pow10Tab32 = [...]uint64{
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
