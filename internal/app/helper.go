package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/dome-registry/dome/internal/buildinfo"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/helperexec"
)

// findHelper finds a helper program (dome-otel, dome-openai): the heavy
// integrations live in programs of their own so that every other command
// starts without loading them.
func findHelper(env *Env, name string) (string, error) {
	return helperexec.Find(name, env.Getenv, installHint)
}

// installHint says how to install the helper name of this dome's version
// (latest for a development build).
func installHint(name string) string { return buildinfo.InstallHint(name) }

// runHelper runs the helper at path with args (its environment is dome's),
// its output going to stdout and stderr, and passes its exit code on: 0 is
// nil, 1 and 2 a silentError (the helper reported why), anything else (a
// crash, a signal) a failed check.
func runHelper(ctx context.Context, path string, args []string, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && (ee.ExitCode() == ExitCheck || ee.ExitCode() == ExitUsage):
		return silentError{code: ee.ExitCode()}
	case errors.As(err, &ee):
		return &errkind.CheckError{Problem: fmt.Sprintf("%s failed: %v", path, err)}
	}
	return &errkind.CheckError{Problem: fmt.Sprintf("cannot run %s: %v", path, err), Hint: "re" + installHint(lastElem(path))}
}

// helperOutput keeps the first bytes of a helper's stderr for a one-line
// warning.
type helperOutput struct{ bytes.Buffer }

func (h *helperOutput) Write(p []byte) (int, error) {
	if room := 8<<10 - h.Len(); room > 0 {
		if len(p) > room {
			h.Buffer.Write(p[:room])
		} else {
			h.Buffer.Write(p)
		}
	}
	return len(p), nil
}

// Summary is the output on one line.
func (h *helperOutput) Summary() string {
	return strings.Join(strings.Fields(h.String()), " ")
}

func lastElem(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}
