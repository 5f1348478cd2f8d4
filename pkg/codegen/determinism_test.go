package codegen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/dome-registry/dome/pkg/codegen"
)

// TestMain lets the determinism test run generation in a child process with
// its own TZ, LANG and umask (DOME_TEST_GEN_REPO, DOME_TEST_GEN_OUT,
// DOME_TEST_GEN_UMASK).
func TestMain(m *testing.M) {
	if repo := os.Getenv("DOME_TEST_GEN_REPO"); repo != "" {
		if u := os.Getenv("DOME_TEST_GEN_UMASK"); u != "" {
			n, _ := strconv.ParseInt(u, 8, 32)
			syscall.Umask(int(n))
		}
		t := &testing.T{}
		clients := generateAll(t, openGen(t, repo))
		if _, err := codegen.Write(os.Getenv("DOME_TEST_GEN_OUT"), clients, &codegen.Scope{}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDeterminism_TZ_LANG_Umask generates the example registry in two
// child processes that differ in TZ (UTC vs Asia/Tokyo), LANG (C vs
// de_DE.UTF-8) and umask (022 vs 077): the files and manifests must be
// byte-identical, and every file mode 0644.
func TestDeterminism_TZ_LANG_Umask(t *testing.T) {
	r := exampleRepo(t)
	run := func(tz, lang, umask string) string {
		out := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "DOME_TEST_GEN_REPO="+r.Dir, "DOME_TEST_GEN_OUT="+out, "DOME_TEST_GEN_UMASK="+umask, "TZ="+tz, "LANG="+lang, "LC_ALL="+lang)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("generate with TZ=%s LANG=%s umask %s: %v\n%s", tz, lang, umask, err, b)
		}
		return out
	}
	a := run("UTC", "C", "022")
	b := run("Asia/Tokyo", "de_DE.UTF-8", "077")
	fa, fb := readTree(t, a), readTree(t, b)
	if len(fa) != 15*4+30*6 || len(fa) != len(fb) { // go: client.gen.go, dome.gen.go; ts, python: four sources; each + operations.json, manifest.json
		t.Fatalf("file counts: %d vs %d", len(fa), len(fb))
	}
	manifests := 0
	for p, c := range fa {
		if fb[p] != c {
			t.Errorf("%s differs between the two environments", p)
		}
		if filepath.Base(p) == codegen.ManifestFile {
			manifests++
		}
		for _, dir := range []string{a, b} {
			fi, err := os.Stat(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: mode %v, want 0644 whatever the umask", p, fi.Mode().Perm())
			}
		}
	}
	if manifests != 45 {
		t.Errorf("want 45 manifests, got %d", manifests)
	}
}
