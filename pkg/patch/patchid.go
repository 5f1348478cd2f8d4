package patch

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"hash"
)

// PatchID is the stable patch id of one patch in a stream, with the commit
// named before it (zero when none was).
type PatchID struct {
	ID     OID
	Commit OID
}

// PatchIDs computes `git patch-id --stable` for every patch in data (the
// output of git format-patch, git log -p, git show or git diff), in order,
// following git's builtin/patch-id.c line by line: the index lines and hunk
// headers are not hashed, whitespace is removed from every hashed line, each
// file's diff is hashed separately and the SHA-1 sums are added with carry,
// so the id does not depend on file order. Patches with nothing to hash are
// skipped, as git skips them.
func PatchIDs(data []byte) []PatchID {
	var out []PatchID
	var commit OID
	s := &idScanner{data: data}
	for !s.eof() {
		next, id, n := s.one()
		if n > 0 {
			out = append(out, PatchID{ID: id, Commit: commit})
		}
		commit = next
	}
	return out
}

type idScanner struct {
	data []byte
	pos  int
}

func (s *idScanner) eof() bool { return s.pos >= len(s.data) }

func (s *idScanner) line() ([]byte, bool) {
	if s.eof() {
		return nil, false
	}
	i := bytes.IndexByte(s.data[s.pos:], '\n')
	var l []byte
	if i < 0 {
		l = s.data[s.pos:]
		s.pos = len(s.data)
	} else {
		l = s.data[s.pos : s.pos+i+1]
		s.pos += i + 1
	}
	return l, true
}

// one is get_one_patchid with stable = 1, verbatim = 0.
func (s *idScanner) one() (next OID, result OID, patchlen int) {
	before, after := -1, -1
	binary := false
	var preOID, postOID []byte
	ctx := sha1.New()
	for {
		line, ok := s.line()
		if !ok {
			break
		}
		p := line
		switch {
		case bytes.HasPrefix(line, []byte("commit ")):
			p = line[len("commit "):]
		case bytes.HasPrefix(line, []byte("From ")):
			p = line[len("From "):]
		case bytes.HasPrefix(line, []byte(`\ `)) && len(line) > 12:
			continue
		}
		if id, ok := oidHex(p); ok {
			next = id
			break
		}
		if patchlen == 0 && !bytes.HasPrefix(line, []byte("diff ")) {
			continue
		}
		if before == -1 {
			switch {
			case bytes.HasPrefix(line, []byte("GIT binary patch")), bytes.HasPrefix(line, []byte("Binary files")):
				binary = true
				before = 0
				ctx.Write(preOID)
				ctx.Write(postOID)
				flushOne(&result, ctx)
				continue
			case bytes.HasPrefix(line, []byte("index ")):
				q := line[len("index "):]
				if i := bytes.Index(line, []byte("..")); i >= 0 {
					rest := line[i+2:]
					end := bytes.IndexByte(rest, ' ')
					if end < 0 {
						end = len(rest) - 1
					}
					if end >= 0 {
						preOID = append([]byte(nil), q[:i-len("index ")]...)
						postOID = append([]byte(nil), rest[:end]...)
					}
				}
				continue
			case bytes.HasPrefix(line, []byte("--- ")):
				before, after = 1, 1
			case !isAlpha(line[0]):
				return next, finish(&result, ctx), patchlen
			}
		}
		if binary {
			if bytes.HasPrefix(line, []byte("diff ")) {
				binary = false
				before = -1
			}
			continue
		}
		if before == 0 && after == 0 {
			if bytes.HasPrefix(line, []byte("@@ -")) {
				before, after = scanHunkHeader(line)
				continue
			}
			if !bytes.HasPrefix(line, []byte("diff ")) {
				return next, finish(&result, ctx), patchlen
			}
			flushOne(&result, ctx)
			before, after = -1, -1
		}
		if line[0] == '-' || line[0] == ' ' {
			before--
		}
		if line[0] == '+' || line[0] == ' ' {
			after--
		}
		stripped := removeSpace(line)
		patchlen += len(stripped)
		ctx.Write(stripped)
		continue
	}
	return next, finish(&result, ctx), patchlen
}

func finish(result *OID, ctx hash.Hash) OID {
	flushOne(result, ctx)
	return *result
}

// flushOne adds the SHA-1 of ctx to result as a 20-byte number with carry
// (byte 0 first) and resets ctx.
func flushOne(result *OID, ctx hash.Hash) {
	sum := ctx.Sum(nil)
	ctx.Reset()
	carry := 0
	for i := 0; i < len(result); i++ {
		carry += int(result[i]) + int(sum[i])
		result[i] = byte(carry)
		carry >>= 8
	}
}

// oidHex is git's get_oid_hex: 40 hex digits (any case) at the start of p.
func oidHex(p []byte) (OID, bool) {
	var o OID
	if len(p) < 40 {
		return o, false
	}
	if _, err := hex.Decode(o[:], p[:40]); err != nil {
		return o, false
	}
	return o, true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// removeSpace drops git's whitespace (space, tab, LF, CR) from line.
func removeSpace(line []byte) []byte {
	out := make([]byte, 0, len(line))
	for _, c := range line {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		out = append(out, c)
	}
	return out
}

// scanHunkHeader reads the counts of "@@ -a,b +c,d @@" as git's
// scan_hunk_header does (a missing count is 1; a malformed header leaves
// what was read).
func scanHunkHeader(line []byte) (before, after int) {
	q := line[4:]
	before, after = 0, 0
	n := digits(q)
	if n < len(q) && q[n] == ',' {
		q = q[n+1:]
		before = atoi(q)
		n = digits(q)
	} else {
		before = 1
	}
	if n == 0 || n+1 >= len(q) || q[n] != ' ' || q[n+1] != '+' {
		return before, 0
	}
	r := q[n+2:]
	n = digits(r)
	if n < len(r) && r[n] == ',' {
		r = r[n+1:]
		after = atoi(r)
	} else {
		after = 1
	}
	return before, after
}

func digits(b []byte) int {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	return n
}

func atoi(b []byte) int {
	v := 0
	for i := 0; i < len(b) && b[i] >= '0' && b[i] <= '9' && v < 1<<30; i++ {
		v = v*10 + int(b[i]-'0')
	}
	return v
}
