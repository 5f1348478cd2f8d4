// Package helpertest lets a test binary stand in for dome's helper
// programs (dome-openai, dome-otel), the way testscript runs a test binary
// as dome: Main runs the helper the binary was started as, else links the
// binary under each helper's name into a temporary folder, points
// DOME_EXEC_PATH at it (where pkg/helperexec looks first) and runs the
// tests. Tests then exercise the real helper through the real lookup and
// exec, with no build step.
package helpertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dome-registry/dome/internal/domeopenai"
	"github.com/dome-registry/dome/internal/domeotel"
	"github.com/dome-registry/dome/pkg/helperexec"
)

// OpenAI runs dome-openai as the process (arguments and streams) and
// returns its exit code.
func OpenAI() int {
	return domeopenai.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv)
}

// OTel runs dome-otel as the process and returns its exit code.
func OTel() int {
	return domeotel.Main(context.Background(), os.Args, os.Stdout, os.Stderr)
}

// Main runs the tests of m, or the helper the binary was started as.
func Main(m *testing.M, helpers map[string]func() int) {
	if f, ok := helpers[filepath.Base(os.Args[0])]; ok {
		os.Exit(f())
	}
	os.Exit(run(m, helpers))
}

func run(m *testing.M, helpers map[string]func() int) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "helpertest: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "dome-helpers-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "helpertest: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	for name := range helpers {
		if err := os.Symlink(self, filepath.Join(dir, name)); err != nil {
			fmt.Fprintf(os.Stderr, "helpertest: %v\n", err)
			return 1
		}
	}
	os.Setenv(helperexec.EnvExecPath, dir)
	return m.Run()
}
