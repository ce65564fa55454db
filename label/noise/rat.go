package noise

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// maxRatText bounds the length of a number ParseRat accepts, and maxExponent
// the magnitude of its decimal exponent, so that a hostile flag value cannot
// make it build an enormous integer.
const (
	maxRatText  = 200
	maxExponent = 400
)

// ParseRat parses an exact rational number written as a decimal ("40",
// "6.23", "-0.5", "1e4", "2.5E-3") or as a fraction of decimal integers
// ("623/100"). It does not round: "6.23" is exactly 623/100. Prefixes such as
// "0x" and the octal reading of a leading zero are not accepted.
func ParseRat(s string) (*big.Rat, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, fmt.Errorf("%w: empty number", ErrInvalidParameter)
	}
	if len(t) > maxRatText {
		return nil, fmt.Errorf("%w: number %.20q... is longer than %d characters", ErrInvalidParameter, t, maxRatText)
	}
	if num, den, ok := strings.Cut(t, "/"); ok {
		if !isInteger(num, true) || !isInteger(den, false) {
			return nil, fmt.Errorf("%w: %q is not a fraction of decimal integers like 623/100", ErrInvalidParameter, t)
		}
		n, _ := new(big.Int).SetString(num, 10)
		d, _ := new(big.Int).SetString(den, 10)
		if d.Sign() == 0 {
			return nil, fmt.Errorf("%w: %q has a zero denominator", ErrInvalidParameter, t)
		}
		return new(big.Rat).SetFrac(n, d), nil
	}
	if !isDecimal(t) {
		return nil, fmt.Errorf("%w: %q is not a decimal number like 40, 6.23, 1e4 or 623/100", ErrInvalidParameter, t)
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a decimal number", ErrInvalidParameter, t)
	}
	return r, nil
}

// isInteger reports whether s is a non-empty run of ASCII digits, with an
// optional leading sign when signed.
func isInteger(s string, signed bool) bool {
	if signed && s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isDecimal reports whether s is [sign] digits [. digits] [e|E [sign] digits],
// with at least one mantissa digit and a bounded exponent.
func isDecimal(s string) bool {
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
		if !isInteger(exp, true) {
			return false
		}
		e, err := strconv.Atoi(exp)
		if err != nil || e > maxExponent || e < -maxExponent {
			return false
		}
	}
	ip, fp, _ := strings.Cut(mant, ".")
	if ip == "" && fp == "" {
		return false
	}
	return (ip == "" || isInteger(ip, false)) && (fp == "" || isInteger(fp, false))
}

// RatFromFloat returns the exact rational value of f (every finite float64 is
// a dyadic rational). It rejects NaN and ±Inf. Note that a decimal such as 0.1
// is not exactly representable as a float64, so RatFromFloat(0.1) is
// 3602879701896397/36028797018963968; prefer ParseRat for user input, whose
// small denominators also keep the samplers on their fast path.
func RatFromFloat(f float64) (*big.Rat, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: %v is not a finite number", ErrInvalidParameter, f)
	}
	return new(big.Rat).SetFloat64(f), nil
}

// ratText writes r as an exact decimal when it has a finite one of modest
// length, and as a fraction otherwise.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// A reduced fraction has a finite decimal iff its denominator is 2^a·5^b.
	d := new(big.Int).Set(r.Denom())
	var twos, fives int
	for d.Bit(0) == 0 {
		d.Rsh(d, 1)
		twos++
	}
	five, m := big.NewInt(5), new(big.Int)
	for {
		q, rem := new(big.Int).QuoRem(d, five, m)
		if rem.Sign() != 0 {
			break
		}
		d = q
		fives++
	}
	if d.Cmp(bigOne) == 0 {
		if prec := max(twos, fives); prec <= 30 {
			return r.FloatString(prec)
		}
	}
	return r.RatString()
}
