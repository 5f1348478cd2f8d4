//go:build !unix

package outfile

import "errors"

func mkfifo(string) error    { return errors.New("no FIFOs") }
func mknodNull(string) error { return errors.New("no device nodes") }
