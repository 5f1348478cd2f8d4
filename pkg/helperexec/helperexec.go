package helperexec

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// EnvExecPath is the environment variable naming the directories searched
// first.
const EnvExecPath = "DOME_EXEC_PATH"

// Names of the helper programs.
const (
	// Full is the whole command set, which dome's front (bin/dome) runs
	// for every command it does not answer itself.
	Full   = "dome-full"
	OpenAI = "dome-openai"
	OTel   = "dome-otel"
)

// Lookup is where Find looks.
type Lookup struct {
	// Getenv reads DOME_EXEC_PATH and PATH (nil: neither is searched).
	Getenv func(string) string
	// Executable is the running program's path (nil: os.Executable).
	Executable func() (string, error)
	// Install says how to install the helper name: the program that knows
	// how it is packaged says (nil: the hint names DOME_EXEC_PATH only).
	Install func(name string) string
}

// Find returns the absolute path of the helper program name.
func Find(name string, getenv func(string) string, install func(name string) string) (string, error) {
	return Lookup{Getenv: getenv, Install: install}.Find(name)
}

// Find returns the absolute path of the helper program name.
func (l Lookup) Find(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/') {
		return "", fmt.Errorf("helper name %q: want a bare program name", name)
	}
	getenv := l.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var looked []string
	// 1. DOME_EXEC_PATH, in order.
	if v := getenv(EnvExecPath); v != "" {
		var dirs []string
		for _, d := range filepath.SplitList(v) {
			if d == "" {
				continue
			}
			if abs, err := filepath.Abs(d); err == nil {
				d = abs
			}
			if p, ok := candidate(d, name); ok {
				return p, nil
			}
			dirs = append(dirs, d)
		}
		looked = append(looked, fmt.Sprintf("%s (%s)", EnvExecPath, strings.Join(dirs, string(filepath.ListSeparator))))
	}
	// 2. Beside the running executable.
	exe := l.Executable
	if exe == nil {
		exe = os.Executable
	}
	if self, err := exe(); err == nil {
		if r, err := filepath.EvalSymlinks(self); err == nil {
			self = r
		}
		dir := filepath.Dir(self)
		if p, ok := candidate(dir, name); ok {
			return p, nil
		}
		looked = append(looked, "beside "+filepath.Base(self)+" ("+dir+")")
	}
	// 3. PATH; relative entries are skipped (a helper is never taken
	// from the working directory).
	if v := getenv("PATH"); v != "" {
		for _, d := range filepath.SplitList(v) {
			if d == "" || !filepath.IsAbs(d) {
				continue
			}
			if p, ok := candidate(d, name); ok {
				return p, nil
			}
		}
		looked = append(looked, "PATH")
	}
	return "", &errkind.InputError{Source: name, Problem: "helper program not found: looked in " + strings.Join(looked, ", "),
		Hint: l.hint(name)}
}

// hint says how to make a missing helper found.
func (l Lookup) hint(name string) string {
	h := "set " + EnvExecPath + " to its directory"
	if l.Install != nil {
		h = l.Install(name) + ", or " + h
	}
	return h
}

// ProgramVersion is a helper program's version: linked, when set at link
// time (-X), else the module version from the build information.
func ProgramVersion(linked string) string {
	if linked != "" {
		return linked
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// candidate reports whether dir/name is an executable regular file.
// (On Windows, dir/name.exe: there the mode has no execute bits.)
func candidate(dir, name string) (string, bool) {
	p := filepath.Join(dir, name)
	if runtime.GOOS == "windows" {
		p += ".exe"
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0) {
		return "", false
	}
	return p, true
}
