package readlimit

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestReadAll(t *testing.T) {
	for _, tt := range []struct {
		name  string
		in    string
		limit int64
		ok    bool
	}{
		{"empty", "", 0, true},
		{"at the limit", "abcd", 4, true},
		{"one past", "abcde", 4, false},
		{"under", "ab", 4, true},
		{"zero limit, one byte", "a", 0, false},
	} {
		for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in)), iotest.DataErrReader(strings.NewReader(tt.in))} {
			got, err := ReadAll(r, tt.limit)
			if tt.ok {
				if err != nil || string(got) != tt.in {
					t.Errorf("%s: %q, %v", tt.name, got, err)
				}
				continue
			}
			if te, ok := IsTooLarge(err); !ok || te.Limit != tt.limit {
				t.Errorf("%s: error %v, want TooLargeError{%d}", tt.name, err, tt.limit)
			}
		}
	}
}

// endless is /dev/zero without the file system.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.n += int64(len(p))
	return len(p), nil
}

func TestReadAll_EndlessInputStopsAtTheLimit(t *testing.T) {
	src := &endless{}
	_, err := ReadAll(src, 1<<20)
	if _, ok := IsTooLarge(err); !ok {
		t.Fatalf("error %v", err)
	}
	if src.n > 1<<20+64<<10 {
		t.Fatalf("read %d bytes for a 1 MiB limit", src.n)
	}
}

func TestReader(t *testing.T) {
	got, err := io.ReadAll(Reader(strings.NewReader("abcdef"), 4))
	if _, ok := IsTooLarge(err); !ok || string(got) != "abcd" {
		t.Fatalf("%q, %v", got, err)
	}
	got, err = io.ReadAll(Reader(iotest.OneByteReader(strings.NewReader("abcd")), 4))
	if err != nil || string(got) != "abcd" {
		t.Fatalf("%q, %v", got, err)
	}
	src := &endless{}
	n, err := io.Copy(io.Discard, Reader(src, 3<<20))
	if _, ok := IsTooLarge(err); !ok || n != 3<<20 {
		t.Fatalf("copied %d, %v", n, err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("hello"), 0o644)
	if b, err := ReadFile(small, 5); err != nil || string(b) != "hello" {
		t.Fatalf("%q, %v", b, err)
	}
	// A sparse file: refused from its size, before a byte is read.
	big := filepath.Join(dir, "big")
	f, _ := os.Create(big)
	f.Truncate(1 << 40)
	f.Close()
	start := time.Now()
	if _, err := ReadFile(big, 1<<20); err == nil {
		t.Fatal("a 1 TiB file was read")
	} else if _, ok := IsTooLarge(err); !ok {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
	if _, err := ReadFile(dir, 10); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("directory: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	// /dev/zero fails fast with bounded memory.
	if _, err := os.Stat("/dev/zero"); err == nil {
		start := time.Now()
		if _, err := ReadFile("/dev/zero", 64<<10); err == nil {
			t.Fatal("/dev/zero read whole")
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("/dev/zero took %v", d)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{
		64 << 10: "64 KiB (65536 bytes)",
		64 << 20: "64 MiB (67108864 bytes)",
		1 << 30:  "1 GiB (1073741824 bytes)",
		1000:     "1000 bytes",
	} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
