//go:build !unix

package gitstore

import (
	"io"
	"os"
)

// readSmallFile reads up to len(buf) bytes of the file at path.
func readSmallFile(path string, buf []byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return n, err
}
