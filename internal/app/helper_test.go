package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/buildinfo"
	"github.com/dome-registry/dome/pkg/helperexec"
	"github.com/dome-registry/dome/pkg/stack"
)

// TestRunHelper_ExitCodes: a helper's 1 and 2 are dome's (it reported
// why); anything else is a failed check naming it.
func TestRunHelper_ExitCodes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dome-otel")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho out; echo err >&2; exit $1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg  string
		code int
	}{{"0", 0}, {"1", 1}, {"2", 2}, {"9", 1}} {
		var out, errOut bytes.Buffer
		err := runHelper(context.Background(), p, []string{tc.arg}, &out, &errOut)
		if got := report(&Env{Stderr: io.Discard}, err); got != tc.code || out.String() != "out\n" || errOut.String() != "err\n" {
			t.Errorf("exit %s: dome %d (%v), stdout %q, stderr %q", tc.arg, got, err, out.String(), errOut.String())
		}
		var silent silentError
		if (tc.arg == "1" || tc.arg == "2") != errors.As(err, &silent) {
			t.Errorf("exit %s: %v", tc.arg, err)
		}
	}
	if err := runHelper(context.Background(), filepath.Join(t.TempDir(), "gone"), nil, io.Discard, io.Discard); report(&Env{Stderr: io.Discard}, err) != 1 || !strings.Contains(err.Error(), "cannot run") {
		t.Errorf("%v", err)
	}
}

// TestExportOtelQuietly: dome run start's export says in one line why it
// did not happen (no helper: where dome looked and how to install it; a
// failed helper: what it said).
func TestExportOtelQuietly(t *testing.T) {
	dir := t.TempDir()
	env := &Env{Getenv: func(k string) string {
		if k == "DOME_EXEC_PATH" || k == "PATH" {
			return dir
		}
		return ""
	}}
	l := stack.Layout{Root: filepath.Join(dir, "r1"), RunID: "r1"}
	err := exportOtelQuietly(context.Background(), env, l, "http://127.0.0.1:9/v1/traces")
	if err == nil || !strings.Contains(err.Error(), "dome-otel: helper program not found") || !strings.Contains(err.Error(), "go install github.com/dome-registry/dome/cmd/dome-otel@") {
		t.Fatalf("%v", err)
	}
	script := "#!/bin/sh\necho \"$@\" > " + filepath.Join(dir, "args") + "\necho 'dome-otel: OTLP export failed' >&2\necho 'hint: is the collector listening?' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "dome-otel"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	err = exportOtelQuietly(context.Background(), env, l, "http://127.0.0.1:9/v1/traces")
	if err == nil || err.Error() != "dome-otel: OTLP export failed hint: is the collector listening?" {
		t.Fatalf("%v", err)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	if !strings.HasPrefix(string(args), "export --run-dir "+l.Root+" --run r1 --endpoint http://127.0.0.1:9/v1/traces --service-version ") || !strings.HasSuffix(string(args), " --quiet\n") {
		t.Fatalf("args %q", args)
	}
}

// The install hint names the helper's command at this dome's version, and
// latest for a development build.
func TestInstallHint(t *testing.T) {
	defer func(v string) { buildinfo.Version = v }(buildinfo.Version)
	for v, want := range map[string]string{"v1.2.3": "@v1.2.3 ", "": "@latest ", "dev": "@latest ", "(devel)": "@latest ", "4fbc64a-dirty": "@latest "} {
		buildinfo.Version = v
		if h := installHint(helperexec.OTel); !strings.Contains(h, "go install github.com/dome-registry/dome/cmd/dome-otel"+want) {
			t.Errorf("version %q: %s", v, h)
		}
	}
}
