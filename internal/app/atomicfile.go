package app

import (
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/outfile"
)

// writeOutputFile writes data to an output file the user named with flag
// (--out, -o, --lock, ...). Every command's output file goes through here
// and so through pkg/outfile's rules: a regular file or an absent name is
// replaced atomically (the old bytes or the new, never a part); a character
// device or FIFO (/dev/null, a named pipe) is written in place, never
// replaced by a file; a symlink is followed; a directory, block device,
// socket or dangling symlink is refused (exit 2). Missing folders above a
// new file are created, and a note on stderr says which.
func writeOutputFile(env *Env, flag, path string, data []byte) error {
	res, err := outfile.Write(path, data, outfile.Options{MakeDirs: true})
	for _, d := range res.CreatedDirs {
		fmt.Fprintf(env.Stderr, "dome: created folder %s for %s\n", relTo(env.WorkDir, d), flag)
	}
	return outputError(flag, err)
}

// outputError turns an outfile refusal into an input error naming the flag.
func outputError(flag string, err error) error {
	var re *outfile.RefusedError
	if errors.As(err, &re) {
		src := re.Path
		if flag != "" {
			src = flag + " " + re.Path
		}
		return &errkind.InputError{Source: src, Problem: re.Problem, Hint: re.Hint, Err: err}
	}
	return err
}
