package patch

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zlib"
)

// maxBinarySize bounds the inflated size of one binary patch.
const maxBinarySize = 1 << 30

// binary parses the blocks after "GIT binary patch": the forward block
// (literal or delta) and the optional reverse block, which is ignored.
func (p *parser) binary() (*Binary, error) {
	fwd, err := p.binaryBlock()
	if err != nil {
		return nil, err
	}
	if fwd == nil {
		return nil, p.errf(p.i+1, "\"GIT binary patch\" without a literal or delta block")
	}
	// The reverse block, if any: applying forward never reads it, so its
	// lines are skipped, not decoded (git apply decodes it only for -R).
	if p.i < len(p.lines) && (strings.HasPrefix(p.lines[p.i], "literal ") || strings.HasPrefix(p.lines[p.i], "delta ")) {
		for p.i++; p.i < len(p.lines); {
			l := strings.TrimSuffix(p.lines[p.i], "\n")
			p.i++
			if l == "" {
				break
			}
		}
	}
	return fwd, nil
}

func (p *parser) binaryBlock() (*Binary, error) {
	if p.i >= len(p.lines) {
		return nil, nil
	}
	l := strings.TrimSuffix(p.lines[p.i], "\n")
	var b Binary
	var sz string
	switch {
	case strings.HasPrefix(l, "literal "):
		b.Kind, sz = BinaryLiteral, strings.TrimPrefix(l, "literal ")
	case strings.HasPrefix(l, "delta "):
		b.Kind, sz = BinaryDelta, strings.TrimPrefix(l, "delta ")
	default:
		return nil, nil
	}
	n, err := strconv.ParseInt(sz, 10, 64)
	if err != nil || n < 0 || n > maxBinarySize {
		return nil, p.errf(p.i+1, "bad binary size in %q", l)
	}
	b.Size = n
	start := p.i + 1
	p.i++
	end := p.i
	for end < len(p.lines) && p.lines[end] != "\n" && p.lines[end] != "" {
		end++
	}
	raw := make([]byte, 0, (end-p.i)*52)
	for p.i < len(p.lines) {
		l := strings.TrimSuffix(p.lines[p.i], "\n")
		p.i++
		if l == "" {
			break
		}
		if raw, err = decode85Line(raw, l); err != nil {
			return nil, p.errf(p.i, "binary patch: %v", err)
		}
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, p.errf(start, "binary patch: %v", err)
	}
	// Exactly the size the header gives: one byte more is an error, and
	// reading past the data checks the stream's checksum. The buffer is
	// made whole at once only when the data can hold that much (deflate
	// expands at most ~1032 times): a header may lie.
	var out []byte
	var got int64
	if n <= int64(len(raw))*1032+64 {
		out = make([]byte, n+1)
		var m int
		m, err = io.ReadFull(zr, out)
		got, out = int64(m), out[:m:m]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil
		}
	} else {
		var w bytes.Buffer
		got, err = io.Copy(&w, io.LimitReader(zr, n+1))
		out = w.Bytes()
	}
	if err != nil {
		return nil, p.errf(start, "binary patch: inflate: %v", err)
	}
	if got != n {
		return nil, p.errf(start, "binary patch: inflated %d bytes, the header says %d", got, n)
	}
	b.Data = out
	return &b, nil
}

const b85chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// b85value is c's value in b85chars, or -1.
func b85value(c byte) int { return int(b85dec[c]) }

// b85dec is b85chars inverted, -1 elsewhere: a table written out (no code
// runs for it at start-up), which TestBase85Table checks.
var b85dec = [256]int8{
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, 62, -1, 63, 64, 65, 66, -1, 67, 68, 69, 70, -1, 71, -1, -1,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, 72, 73, 74, 75, 76,
	77, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
	25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, -1, -1, -1, 78, 79,
	80, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50,
	51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 81, 82, 83, 84, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
}

// decode85Line decodes one line of git's base85: a length character
// ('A'-'Z' = 1-26, 'a'-'z' = 27-52) then 5 characters per 4 bytes.
// quoteASCII shows one byte of an ASCII format: 'c', or 0xNN beyond ASCII
// (%q of a byte would print it as the Latin-1 character of that value).
func quoteASCII(c byte) string {
	if c < 0x80 {
		return fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func decode85Line(dst []byte, l string) ([]byte, error) {
	if len(l) < 6 {
		return nil, fmt.Errorf("line %q too short", l)
	}
	var n int
	switch c := l[0]; {
	case c >= 'A' && c <= 'Z':
		n = int(c-'A') + 1
	case c >= 'a' && c <= 'z':
		n = int(c-'a') + 27
	default:
		return nil, fmt.Errorf("bad length character %s", quoteASCII(c))
	}
	enc := l[1:]
	if len(enc) != (n+3)/4*5 {
		return nil, fmt.Errorf("line of %d characters for %d bytes", len(enc), n)
	}
	out := slices.Grow(dst, (n+3)/4*4)
	for i := 0; i < len(enc); i += 5 {
		var acc uint64
		for j := 0; j < 5; j++ {
			v := b85value(enc[i+j])
			if v < 0 {
				return nil, fmt.Errorf("bad base85 character %s", quoteASCII(enc[i+j]))
			}
			acc = acc*85 + uint64(v)
		}
		if acc > 0xffffffff {
			return nil, fmt.Errorf("base85 group overflows")
		}
		out = append(out, byte(acc>>24), byte(acc>>16), byte(acc>>8), byte(acc))
	}
	return out[:len(dst)+n], nil
}

// applyDelta applies a git delta (as in packs and binary patches) to base.
func applyDelta(base, delta []byte) ([]byte, error) {
	srcSize, n := deltaSize(delta)
	if n == 0 {
		return nil, fmt.Errorf("delta: bad source size")
	}
	delta = delta[n:]
	if srcSize != uint64(len(base)) {
		return nil, fmt.Errorf("delta: for a %d-byte preimage, the file has %d bytes", srcSize, len(base))
	}
	dstSize, n := deltaSize(delta)
	if n == 0 || dstSize > maxBinarySize {
		return nil, fmt.Errorf("delta: bad result size")
	}
	delta = delta[n:]
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		cmd := delta[0]
		delta = delta[1:]
		switch {
		case cmd&0x80 != 0:
			var off, size uint64
			for i := uint(0); i < 4; i++ {
				if cmd&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, fmt.Errorf("delta: truncated copy")
					}
					off |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := uint(0); i < 3; i++ {
				if cmd&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, fmt.Errorf("delta: truncated copy")
					}
					size |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if size == 0 {
				size = 0x10000
			}
			if off+size > uint64(len(base)) || uint64(len(out))+size > dstSize {
				return nil, fmt.Errorf("delta: copy out of bounds")
			}
			out = append(out, base[off:off+size]...)
		case cmd != 0:
			if int(cmd) > len(delta) || uint64(len(out))+uint64(cmd) > dstSize {
				return nil, fmt.Errorf("delta: insert out of bounds")
			}
			out = append(out, delta[:cmd]...)
			delta = delta[cmd:]
		default:
			return nil, fmt.Errorf("delta: reserved opcode 0")
		}
	}
	if uint64(len(out)) != dstSize {
		return nil, fmt.Errorf("delta: produced %d bytes, expected %d", len(out), dstSize)
	}
	return out, nil
}

func deltaSize(d []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(d) && i < 10; i++ {
		v |= uint64(d[i]&0x7f) << (7 * uint(i))
		if d[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}
