package canonical

import (
	"math"
	"strconv"
)

// AppendNumber appends the RFC 8785 form of f to dst: the shortest decimal
// digits that round-trip to f (as strconv finds them), laid out by the rules
// of ECMAScript's Number::toString (ECMA-262 section 6.1.6.1.20): plain
// digits for decimal exponents from -7 to 20, exponent form ("1e+21",
// "1e-7") outside, "-0" written as "0". f must be finite.
func AppendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Integers below 2^53 are written with all their digits (n = k <= 16).
	if f < 1<<53 && f == math.Trunc(f) {
		return strconv.AppendUint(dst, uint64(f), 10)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	// Split into the digits d1..dk and the exponent n, f = 0.d1..dk * 10^n.
	var digits [24]byte
	k := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[k] = e[i]
			k++
		}
	}
	exp := 0
	neg := e[i+1] == '-'
	for _, c := range e[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if neg {
		exp = -exp
	}
	n := exp + 1
	d := digits[:k]
	switch {
	case k <= n && n <= 21:
		dst = append(dst, d...)
		for j := k; j < n; j++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, d[:n]...)
		dst = append(dst, '.')
		dst = append(dst, d[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for j := n; j < 0; j++ {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	default:
		dst = append(dst, d[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		} else {
			dst = append(dst, '-')
		}
		x := n - 1
		if x < 0 {
			x = -x
		}
		dst = strconv.AppendInt(dst, int64(x), 10)
	}
	return dst
}
