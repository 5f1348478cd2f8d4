package helperexec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

func writeProgram(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFind_Order(t *testing.T) {
	root := t.TempDir()
	execPath, self, path := filepath.Join(root, "exec"), filepath.Join(root, "self"), filepath.Join(root, "path")
	inExec := writeProgram(t, execPath, OTel, 0o755)
	inSelf := writeProgram(t, self, OTel, 0o755)
	inPath := writeProgram(t, path, OTel, 0o755)
	dome := writeProgram(t, self, "dome", 0o755)
	// A dome reached through a symlink looks beside the file it points to.
	link := filepath.Join(root, "linkdir", "dome")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(dome, link); err != nil {
		t.Fatal(err)
	}
	exe := func(p string) func() (string, error) { return func() (string, error) { return p, nil } }
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		name string
		l    Lookup
		want string
	}{
		{"DOME_EXEC_PATH first", Lookup{Getenv: env(map[string]string{EnvExecPath: execPath, "PATH": path}), Executable: exe(link)}, inExec},
		{"an empty DOME_EXEC_PATH entry is skipped", Lookup{Getenv: env(map[string]string{EnvExecPath: string(filepath.ListSeparator) + filepath.Join(root, "none"), "PATH": path}), Executable: exe(link)}, inSelf},
		{"beside the executable, symlinks resolved", Lookup{Getenv: env(map[string]string{"PATH": path}), Executable: exe(link)}, inSelf},
		{"then PATH", Lookup{Getenv: env(map[string]string{"PATH": "relative" + string(filepath.ListSeparator) + path}), Executable: exe(filepath.Join(root, "linkdir", "x"))}, inPath},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.l.Find(OTel)
			if err != nil || got != tc.want {
				t.Fatalf("%q %v, want %q", got, err, tc.want)
			}
		})
	}
}

func TestFind_Missing(t *testing.T) {
	root := t.TempDir()
	// Not executable, a directory, a relative PATH entry holding it: none counts.
	writeProgram(t, filepath.Join(root, "noexec"), OpenAI, 0o644)
	os.MkdirAll(filepath.Join(root, "dir", OpenAI), 0o755)
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	os.Chdir(root)
	writeProgram(t, filepath.Join(root, "rel"), OpenAI, 0o755)
	l := Lookup{
		Getenv: func(k string) string {
			return map[string]string{EnvExecPath: filepath.Join(root, "noexec"), "PATH": filepath.Join(root, "dir") + string(filepath.ListSeparator) + "rel"}[k]
		},
		Executable: func() (string, error) { return filepath.Join(root, "bin", "dome"), nil },
		Install:    func(name string) string { return "install " + name + " v1.2.3" },
	}
	_, err := l.Find(OpenAI)
	var ie *errkind.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("%v: want an InputError", err)
	}
	for _, want := range []string{"dome-openai: helper program not found", "DOME_EXEC_PATH (" + filepath.Join(root, "noexec") + ")",
		"beside dome (" + filepath.Join(root, "bin") + ")", "PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if ie.Hint != "install dome-openai v1.2.3, or set DOME_EXEC_PATH to its directory" {
		t.Errorf("hint %q", ie.Hint)
	}
	l.Install = nil
	if _, err := l.Find(OpenAI); errkind.HintOf(err) != "set DOME_EXEC_PATH to its directory" {
		t.Errorf("hint without an installer: %q", errkind.HintOf(err))
	}
	if _, err := (Lookup{}).Find("../dome-otel"); err == nil {
		t.Error("a name with a slash was looked up")
	}
}
