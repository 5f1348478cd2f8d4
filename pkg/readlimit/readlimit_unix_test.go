//go:build unix

package readlimit

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestReadFile_FIFO(t *testing.T) {
	dir := t.TempDir()
	// A FIFO is read to its end.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err == nil {
				w.Write(bytes.Repeat([]byte("x"), 100))
				w.Close()
			}
		}()
		if b, err := ReadFile(fifo, 100); err != nil || len(b) != 100 {
			t.Fatalf("fifo: %d bytes, %v", len(b), err)
		}
	}
}
