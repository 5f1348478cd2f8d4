package readlimit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// The limit of each kind of input read whole. They are far above any
// legitimate input of the kind and far below what hurts a machine.
const (
	PrivateKey = 64 << 10 // a PEM private key (an Ed25519 PKCS#8 key is 119 bytes)
	Signature  = 64 << 10 // a detached signature file (about 300 bytes)
	KeySet     = 4 << 20  // a trusted key set or an OpenPGP keyring (thousands of keys)
	Profile    = 4 << 20  // a profile, a policy, a lock file, agents.md, an index
	Document   = 64 << 20 // a JSON or YAML document: canon, digest, sign, verify, specs
	Proposal   = 96 << 20 // a patch proposal (its diffs inline)
)

// TooLargeError is an input with more bytes than its limit.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string {
	return "more than the limit of " + Size(e.Limit)
}

// IsTooLarge reports whether err is (or wraps) a *TooLargeError, and returns it.
func IsTooLarge(err error) (*TooLargeError, bool) {
	var t *TooLargeError
	ok := errors.As(err, &t)
	return t, ok
}

// Size writes a byte count for people: "64 KiB (65536 bytes)".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB (%d bytes)", n>>30, n)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB (%d bytes)", n>>20, n)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB (%d bytes)", n>>10, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Reader returns a reader of r that fails with a *TooLargeError as soon as r
// yields more than limit bytes (it reads at most limit+1). Streaming
// consumers (a digest, a canonicalizer) wrap their input in it.
func Reader(r io.Reader, limit int64) io.Reader {
	return &limited{r: r, left: limit + 1, limit: limit}
}

type limited struct {
	r     io.Reader
	left  int64 // bytes that may still be read, the one too many included
	limit int64
	err   error
}

func (l *limited) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left <= 0 {
		// The byte past the limit arrived: keep the limit's worth and fail.
		l.err = &TooLargeError{Limit: l.limit}
		return n - 1, l.err
	}
	return n, err
}

// ReadAll reads r to its end, failing with a *TooLargeError once more than
// limit bytes arrive.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	return ReadAllHint(r, limit, 0)
}

// ReadAllHint is ReadAll with the expected size (0: unknown), so a known
// length is read into one buffer.
func ReadAllHint(r io.Reader, limit, size int64) ([]byte, error) {
	lr := io.LimitReader(r, limit+1)
	var data []byte
	var err error
	if size > 0 && size <= limit {
		buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
		_, err = buf.ReadFrom(lr)
		data = buf.Bytes()
	} else {
		data, err = io.ReadAll(lr)
	}
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}

// ReadFile reads the file at path whole: a regular file larger than limit is
// refused before any byte is read; anything else (a pipe, /dev/stdin, a
// device) is read until its end or until limit+1 bytes, whichever comes first.
// Errors opening the file are returned as they are (*fs.PathError).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpen(f, limit)
}

// ReadOpen is ReadFile on an open file.
func ReadOpen(f *os.File, limit int64) ([]byte, error) {
	var size int64
	if fi, err := f.Stat(); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory, not a file", f.Name())
		}
		if fi.Mode().IsRegular() {
			if fi.Size() > limit {
				return nil, &TooLargeError{Limit: limit}
			}
			size = fi.Size()
		}
	}
	return ReadAllHint(f, limit, size)
}

// ReadRegularFile is ReadFile for a path that must be a regular file (a
// generated file, a manifest): a FIFO, device, socket or directory there is
// refused before it is opened, so it can neither block nor stream forever.
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscallNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpen(f, limit)
}
