//go:build unix

package gitstore

import "syscall"

// readSmallFile reads up to len(buf) bytes of the file at path with three
// system calls (open, read, close) where os.ReadFile makes six (it also
// registers the descriptor with the poller, stats the file and reads to
// EOF): servers read a branch head per request. A file longer than buf
// reads as len(buf) bytes.
func readSmallFile(path string, buf []byte) (int, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}
