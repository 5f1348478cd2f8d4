package canonical

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// RFC 8785 appendix B.
func TestAppendNumber_RFC8785AppendixB(t *testing.T) {
	tests := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, tt := range tests {
		f := math.Float64frombits(tt.bits)
		if got := string(AppendNumber(nil, f)); got != tt.want {
			t.Errorf("%016x: got %s, want %s", tt.bits, got, tt.want)
		}
		// The same value written as JSON text canonicalizes the same way.
		in := strconv.FormatFloat(f, 'g', 17, 64)
		if got, err := Transform([]byte(in)); err != nil || string(got) != tt.want {
			t.Errorf("Transform(%s) = %s, %v; want %s", in, got, err, tt.want)
		}
	}
}

// es6Numbers yields the IEEE-754 values of the ES6 number test file published
// with the RFC 8785 reference implementations (testdata/rfc8785/README.md):
// fixed edge cases, 2000 values after the smallest normal, then a SHA-256
// chain read as little-endian doubles, skipping zeros and non-finite values.
func es6Numbers(n int, yield func(bits uint64)) {
	static := []uint64{
		0x0000000000000000, 0x8000000000000000, 0x0000000000000001, 0x8000000000000001,
		0xc46696695dbd1cc3, 0xc43211ede4974a35, 0xc3fce97ca0f21056, 0xc3c7213080c1a6ac,
		0xc39280f39a348556, 0xc35d9b1f5d20d557, 0xc327af4c4a80aaac, 0xc2f2f2a36ecd5556,
		0xc2be51057e155558, 0xc28840d131aaaaac, 0xc253670dc1555557, 0xc21f0b4935555557,
		0xc1e8d5d42aaaaaac, 0xc1b3de4355555556, 0xc17fca0555555556, 0xc1496e6aaaaaaaab,
		0xc114585555555555, 0xc0e046aaaaaaaaab, 0xc0aa0aaaaaaaaaaa, 0xc074d55555555555,
		0xc040aaaaaaaaaaab, 0xc00aaaaaaaaaaaab, 0xbfd5555555555555, 0xbfa1111111111111,
		0xbf6b4e81b4e81b4f, 0xbf35d867c3ece2a5, 0xbf0179ec9cbd821e, 0xbecbf647612f3696,
		0xbe965e9f80f29212, 0xbe61e54c672874db, 0xbe2ca213d840baf8, 0xbdf6e80fe033c8c6,
		0xbdc2533fe68fd3d2, 0xbd8d51ffd74c861c, 0xbd5774ccac3d3817, 0xbd22c3d6f030f9ac,
		0xbcee0624b3818f79, 0xbcb804ea293472c7, 0xbc833721ba905bd3, 0xbc4ebe9c5db3c61e,
		0xbc18987d17c304e5, 0xbbe3ad30dfcf371d, 0xbbaf7b816618582f, 0xbb792f9ab81379bf,
		0xbb442615600f9499, 0xbb101e77800c76e1, 0xbad9ca58cce0be35, 0xbaa4a1e0a3e6fe90,
		0xba708180831f320d, 0xba3a68cd9e985016, 0x446696695dbd1cc3, 0x443211ede4974a35,
		0x43fce97ca0f21056, 0x43c7213080c1a6ac, 0x439280f39a348556, 0x435d9b1f5d20d557,
		0x4327af4c4a80aaac, 0x42f2f2a36ecd5556, 0x42be51057e155558, 0x428840d131aaaaac,
		0x4253670dc1555557, 0x421f0b4935555557, 0x41e8d5d42aaaaaac, 0x41b3de4355555556,
		0x417fca0555555556, 0x41496e6aaaaaaaab, 0x4114585555555555, 0x40e046aaaaaaaaab,
		0x40aa0aaaaaaaaaaa, 0x4074d55555555555, 0x4040aaaaaaaaaaab, 0x400aaaaaaaaaaaab,
		0x3fd5555555555555, 0x3fa1111111111111, 0x3f6b4e81b4e81b4f, 0x3f35d867c3ece2a5,
		0x3f0179ec9cbd821e, 0x3ecbf647612f3696, 0x3e965e9f80f29212, 0x3e61e54c672874db,
		0x3e2ca213d840baf8, 0x3df6e80fe033c8c6, 0x3dc2533fe68fd3d2, 0x3d8d51ffd74c861c,
		0x3d5774ccac3d3817, 0x3d22c3d6f030f9ac, 0x3cee0624b3818f79, 0x3cb804ea293472c7,
		0x3c833721ba905bd3, 0x3c4ebe9c5db3c61e, 0x3c18987d17c304e5, 0x3be3ad30dfcf371d,
		0x3baf7b816618582f, 0x3b792f9ab81379bf, 0x3b442615600f9499, 0x3b101e77800c76e1,
		0x3ad9ca58cce0be35, 0x3aa4a1e0a3e6fe90, 0x3a708180831f320d, 0x3a3a68cd9e985016,
		0x4024000000000000, 0x4014000000000000, 0x3fe0000000000000, 0x3fa999999999999a,
		0x3f747ae147ae147b, 0x3f40624dd2f1a9fc, 0x3f0a36e2eb1c432d, 0x3ed4f8b588e368f1,
		0x3ea0c6f7a0b5ed8d, 0x3e6ad7f29abcaf48, 0x3e35798ee2308c3a, 0x3ed539223589fa95,
		0x3ed4ff26cd5a7781, 0x3ed4f95a762283ff, 0x3ed4f8c60703520c, 0x3ed4f8b72f19cd0d,
		0x3ed4f8b5b31c0c8d, 0x3ed4f8b58d1c461a, 0x3ed4f8b5894f7f0e, 0x3ed4f8b588ee37f3,
		0x3ed4f8b588e47da4, 0x3ed4f8b588e3849c, 0x3ed4f8b588e36bb5, 0x3ed4f8b588e36937,
		0x3ed4f8b588e368f8, 0x3ed4f8b588e368f1, 0x3ff0000000000000, 0xbff0000000000000,
		0xbfeffffffffffffa, 0xbfeffffffffffffb, 0x3feffffffffffffa, 0x3feffffffffffffb,
		0x3feffffffffffffc, 0x3feffffffffffffe, 0xbfefffffffffffff, 0xbfefffffffffffff,
		0x3fefffffffffffff, 0x3fefffffffffffff, 0x3fd3333333333332, 0x3fd3333333333333,
		0x3fd3333333333334, 0x0010000000000000, 0x000ffffffffffffd, 0x000fffffffffffff,
		0x7fefffffffffffff, 0xffefffffffffffff, 0x4340000000000000, 0xc340000000000000,
		0x4430000000000000, 0x44b52d02c7e14af5, 0x44b52d02c7e14af6, 0x44b52d02c7e14af7,
		0x444b1ae4d6e2ef4e, 0x444b1ae4d6e2ef4f, 0x444b1ae4d6e2ef50, 0x3eb0c6f7a0b5ed8c,
		0x3eb0c6f7a0b5ed8d, 0x41b3de4355555553, 0x41b3de4355555554, 0x41b3de4355555555,
		0x41b3de4355555556, 0x41b3de4355555557, 0xbecbf647612f3696, 0x43143ff3c1cb0959,
	}
	i := 0
	for ; i < n && i < len(static); i++ {
		yield(static[i])
	}
	for j := 0; i < n && j < 2000; i, j = i+1, j+1 {
		yield(0x0010000000000000 + uint64(j))
	}
	var block [32]byte
	var pending []byte
	for ; i < n; i++ {
		for {
			if len(pending) == 0 {
				block = sha256.Sum256(block[:])
				pending = block[:]
			}
			bits := binary.LittleEndian.Uint64(pending)
			pending = pending[8:]
			if f := math.Float64frombits(bits); f != 0 && !math.IsInf(f, 0) && !math.IsNaN(f) {
				yield(bits)
				break
			}
		}
	}
}

// TestES6NumberFile writes "hex,expected" lines for the first values of the
// ES6 test file with AppendNumber and compares the SHA-256 of those lines with
// the one published for the file the reference (JavaScript) implementation
// produces: every line must be byte-identical. Each value must also round-trip.
func TestES6NumberFile(t *testing.T) {
	published := map[int]string{
		1000:     "be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687",
		10000:    "b9f7a8e75ef22a835685a52ccba7f7d6bdc99e34b010992cbc5864cd12be6892",
		100000:   "22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7",
		1000000:  "49415fee2c56c77864931bd3624faad425c3c577d6d74e89a83bc725506dad16",
		10000000: "b9f8a44a91d46813b21b9602e72f112613c91408db0b8341fb94603d9db135e0",
	}
	counts := []int{1000, 10000, 100000}
	if os.Getenv("DOME_LONG_TESTS") != "" {
		counts = append(counts, 1000000, 10000000)
	}
	for _, n := range counts {
		h := sha256.New()
		var line, num []byte
		es6Numbers(n, func(bits uint64) {
			f := math.Float64frombits(bits)
			num = AppendNumber(num[:0], f)
			back, err := strconv.ParseFloat(string(num), 64)
			if err != nil || back != f && !(f == 0 && back == 0) {
				t.Fatalf("%016x: %s does not round-trip (%v)", bits, num, err)
			}
			line = strconv.AppendUint(line[:0], bits, 16)
			line = append(line, ',')
			line = append(line, num...)
			line = append(line, '\n')
			h.Write(line)
		})
		if got := hex.EncodeToString(h.Sum(nil)); got != published[n] {
			t.Errorf("first %d lines: sha256 %s, want %s", n, got, published[n])
		}
	}
}

// TestAppendNumber_Layout checks the ECMAScript layout rules directly on
// random doubles: shortest digits, plain notation exactly for decimal
// exponents -7 < n <= 21, and the form of the exponent otherwise.
func TestAppendNumber_Layout(t *testing.T) {
	count := 0
	es6Numbers(102000+176, func(bits uint64) {
		count++
		f := math.Float64frombits(bits)
		got := string(AppendNumber(nil, f))
		if f == 0 {
			if got != "0" {
				t.Fatalf("%016x: %s", bits, got)
			}
			return
		}
		abs := strings.TrimPrefix(got, "-")
		if (f < 0) != (abs != got) {
			t.Fatalf("%016x: sign of %s", bits, got)
		}
		e := strconv.FormatFloat(math.Abs(f), 'e', -1, 64)
		mant, expText, _ := strings.Cut(e, "e")
		digits := strings.Replace(mant, ".", "", 1)
		exp, _ := strconv.Atoi(expText)
		n := exp + 1
		var want string
		switch {
		case len(digits) <= n && n <= 21:
			want = digits + strings.Repeat("0", n-len(digits))
		case 0 < n && n <= 21:
			want = digits[:n] + "." + digits[n:]
		case -6 < n && n <= 0:
			want = "0." + strings.Repeat("0", -n) + digits
		default:
			want = digits[:1]
			if len(digits) > 1 {
				want += "." + digits[1:]
			}
			want += fmt.Sprintf("e%+d", n-1)
		}
		if abs != want {
			t.Fatalf("%016x: got %s, want %s", bits, abs, want)
		}
	})
	if count < 100000 {
		t.Fatalf("checked %d values", count)
	}
}
