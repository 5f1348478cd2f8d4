package canonical

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"io/fs"
)

// Name identifies this canonicalization in artifacts ("canonicalization").
const Name = "jcs-rfc8785"

// DefaultMaxDepth is the nesting limit used when Options.MaxDepth is zero.
const DefaultMaxDepth = 1000

// Options tunes a transformation.
type Options struct {
	// MaxDepth is the deepest nesting of arrays and objects accepted; 0 means
	// DefaultMaxDepth. The top-level value is at depth 0, so "[[]]" has depth 2.
	MaxDepth int
}

func (o Options) maxDepth() int {
	if o.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return o.MaxDepth
}

// SyntaxError reports input that is not one JSON text dome accepts. Offset is
// the byte offset (from 0) of the first byte at fault.
type SyntaxError struct {
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte offset %d: %s", e.Offset, e.Msg)
}

// Transform returns the RFC 8785 canonical bytes of the JSON text in.
func Transform(in []byte) ([]byte, error) {
	return TransformWith(in, Options{})
}

// TransformWith is Transform with options.
func TransformWith(in []byte, opts Options) ([]byte, error) {
	t := newTransformer(opts, len(in)+16) // the output is rarely longer than the input
	t.data = in
	t.eof = true
	if err := t.run(); err != nil {
		return nil, err
	}
	return t.out, nil
}

// TransformReader reads one JSON text from r and returns its canonical bytes.
// It holds the output and a small read window in memory, never the whole
// input.
func TransformReader(r io.Reader, opts Options) ([]byte, error) {
	t := newTransformer(opts, sizeHint(r))
	t.r = r
	t.data = make([]byte, 0, readWindow)
	if err := t.run(); err != nil {
		return nil, err
	}
	return t.out, nil
}

// TransformStream reads one JSON text from r and writes its canonical bytes to
// w. Bytes that can no longer move (the completed elements of a top-level
// array) are written as they are produced; the members of an open object are
// held until it closes, since any later member may sort first. On error, w
// may have received a prefix of the output and nothing after the fault.
func TransformStream(w io.Writer, r io.Reader, opts Options) error {
	t := newTransformer(opts, 64<<10)
	t.r = r
	t.w = w
	t.data = make([]byte, 0, readWindow)
	if err := t.run(); err != nil {
		return err
	}
	return t.flush()
}

// sizeHint guesses the output size from what r knows of its length: the
// output of a JSON text is at most about as long as the text.
func sizeHint(r io.Reader) int {
	const def, most = 64 << 10, 1 << 30
	n := int64(-1)
	switch r := r.(type) {
	case interface{ Len() int }:
		n = int64(r.Len())
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			n = fi.Size()
		}
	}
	if n < def {
		return def
	}
	return int(min(n+16, most))
}

// Marshal encodes v with encoding/json (so struct tags and MarshalJSON apply)
// and returns the canonical bytes of the result.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical: encode %T: %w", v, err)
	}
	return Transform(buf.Bytes())
}

// Digest returns "sha256:" and the 64 lowercase hex digits of the SHA-256 of
// b, taken as they are (b is not canonicalized).
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return formatDigest(sum[:])
}

// DigestJSON returns the Digest of the canonical bytes of the JSON text in.
func DigestJSON(in []byte) (string, error) {
	out, err := Transform(in)
	if err != nil {
		return "", err
	}
	return Digest(out), nil
}

// DigestReader returns the Digest of the canonical bytes of the JSON text read
// from r, hashing as it goes, and the length of those canonical bytes.
func DigestReader(r io.Reader, opts Options) (string, int64, error) {
	h := sha256.New()
	cw := &countWriter{w: h}
	if err := TransformStream(cw, r, opts); err != nil {
		return "", 0, err
	}
	return formatDigest(h.Sum(nil)), cw.n, nil
}

type countWriter struct {
	w hash.Hash
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}

func formatDigest(sum []byte) string {
	var b [7 + 64]byte
	copy(b[:], "sha256:")
	hex.Encode(b[7:], sum)
	return string(b[:])
}

// ParseDigest checks that d is "sha256:" followed by 64 lowercase hex digits
// and returns the 32 bytes it names.
func ParseDigest(d string) ([]byte, error) {
	const prefix = "sha256:"
	if len(d) != len(prefix)+64 || d[:len(prefix)] != prefix {
		return nil, fmt.Errorf("digest %q: want sha256: and 64 lowercase hex digits", d)
	}
	for i := len(prefix); i < len(d); i++ {
		if c := d[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return nil, fmt.Errorf("digest %q: want sha256: and 64 lowercase hex digits", d)
		}
	}
	sum, err := hex.DecodeString(d[len(prefix):])
	if err != nil {
		return nil, fmt.Errorf("digest %q: %w", d, err)
	}
	return sum, nil
}

// Position returns the 1-based line and column (in bytes) of a byte offset in
// in, for messages that point into a file.
func Position(in []byte, offset int64) (line, col int) {
	if offset > int64(len(in)) {
		offset = int64(len(in))
	}
	if offset < 0 {
		offset = 0
	}
	prefix := in[:offset]
	line = bytes.Count(prefix, []byte{'\n'}) + 1
	col = int(offset) - (bytes.LastIndexByte(prefix, '\n') + 1) + 1
	return line, col
}
