package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/dome-registry/dome/internal/app"
	"github.com/dome-registry/dome/internal/domeopenai"
	"github.com/dome-registry/dome/internal/domeotel"
	"github.com/dome-registry/dome/internal/front"
	"github.com/dome-registry/dome/internal/helpertest"
	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script/*.txtar")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		// dome is the front: the commands it runs itself it runs here, the
		// others it hands to the full command set, in process (the story
		// front_handoff.txtar hands them over for real, dome-front).
		"dome": func() { os.Exit(front.Main(context.Background(), frontEnv(), fullInProcess)) },
		"dome-full": func() {
			os.Unsetenv(front.EnvHandedOff)
			os.Exit(fullInProcess(os.Args))
		},
		"dome-front": func() { os.Exit(front.Main(context.Background(), frontEnv(), front.HandOff)) },
		// dome's helper programs, beside dome on PATH as a release installs them
		domeotel.Name:   func() { os.Exit(helpertest.OTel()) },
		domeopenai.Name: func() { os.Exit(helpertest.OpenAI()) },
	})
}

func frontEnv() front.Env {
	wd, _ := os.Getwd()
	return front.Env{Args: os.Args, Env: readcmd.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, WorkDir: wd}}
}

func fullInProcess(args []string) int {
	return app.Main(context.Background(), args, os.Stdin, os.Stdout, os.Stderr)
}

// TestScripts runs every CLI story in testdata/script. Scripts build real git
// repositories with the git binary (tests only; dome itself never runs git).
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(t, "testdata/script"))
}

func scriptParams(t *testing.T, dir string) testscript.Params {
	shared, _ := filepath.Abs("../../../shared")
	root, _ := filepath.Abs("../..")
	_, gitErr := exec.LookPath("git")
	_, goErr := exec.LookPath("go")
	_, pyErr := exec.LookPath("python3")
	_, nodeErr := exec.LookPath("node")
	// Contract tests build generated Go clients: share this machine's Go
	// caches with the scripts (their HOME is a fresh folder).
	goEnv := map[string]string{}
	if goErr == nil {
		if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS").Output(); err == nil {
			vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS"} {
				if i < len(vals) {
					goEnv[k] = vals[i]
				}
			}
		}
	}
	tsc := filepath.Join(root, "contract-tests", "ts", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		tsc = ""
	}
	return testscript.Params{
		Dir:                 dir,
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", e.WorkDir+"/home")
			e.Setenv("XDG_CACHE_HOME", e.WorkDir+"/cache")
			e.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			e.Setenv("GIT_AUTHOR_NAME", "Dome Test")
			e.Setenv("GIT_AUTHOR_EMAIL", "test@dome.invalid")
			e.Setenv("GIT_COMMITTER_NAME", "Dome Test")
			e.Setenv("GIT_COMMITTER_EMAIL", "test@dome.invalid")
			e.Setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
			e.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
			e.Setenv("TZ", "UTC")
			e.Setenv("DOME_ROOT", root)
			// the dome command the scripts run, for scripts that take its path
			if p, err := exec.LookPath("dome"); err == nil {
				e.Setenv("DOME_BIN", p)
			}
			e.Setenv("SHARED", shared)
			for k, v := range goEnv {
				e.Setenv(k, v)
			}
			e.Setenv("DOME_TSC", tsc)
			e.Setenv("CI", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exits N prog args...: run prog and require exit status N (stdout and
			// stderr are kept for the assertions that follow).
			// capture NAME: set $NAME to the trimmed stdout of the last command.
			"capture": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: capture NAME")
				}
				ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
			},
			// gitdaemon DIR: serve the repositories below DIR with a real
			// "git daemon" on 127.0.0.1 and set $GITD to its git:// base URL.
			"gitdaemon": gitDaemon,
			// chatserver: an OpenAI-compatible server for this script at
			// $CHAT_URL (chatserver_test.go).
			"chatserver": chatServer,
			// pgpkey NAME: write an OpenPGP key pair to NAME.key (armored
			// private) and NAME.pub (armored public).
			"pgpkey": pgpKey,
			// releasetag TOOL VERSION [REV]: tag REV (default HEAD) as
			// registry/TOOL/VERSION with the release record dome release
			// writes (no profiles or clients), without dome release's checks:
			// a release for stories about reading through release tags.
			"releasetag": releaseTag,
			// pgdatabase: start a throwaway PostgreSQL cluster for this
			// script (internal/pgtest; $DOME_PGTEST_URL: that server) and
			// set $DATABASE_URL to a new database on it ($DATABASE_URL_REST:
			// the part after "postgres://"). Guard it with
			// [!postgres] skip, a condition that is an error when CI=true.
			"pgdatabase": pgDatabase,
			// forgeproposal IN DIFF OUT ID: a hostile worker's proposal:
			// IN's payload with its diff replaced by the file DIFF
			// (diff_digest and inputs_hash to match) and the proposal id
			// ID, sealed again unsigned. dome stack propose cannot make
			// it: it refuses such diffs itself.
			"forgeproposal": forgeProposal,
			// sharedtmp NAME: set $NAME to a new folder under /tmp that other
			// users can reach (a sandbox's user must read the workers' tools
			// there; $WORK is private), removed when the script ends.
			"sharedtmp": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: sharedtmp NAME")
				}
				dir, err := os.MkdirTemp("/tmp", "dome-script-")
				ts.Check(err)
				ts.Check(os.Chmod(dir, 0o755))
				ts.Defer(func() { os.RemoveAll(dir) })
				ts.Setenv(args[0], dir)
			},
			// ciscript KIND FILE JOB OUT: the commands of a CI template's job as a bash script.
			"ciscript": ciScript,
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exits N program [args...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: bad status %q", args[0])
				}
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("exits: %v", err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
				}
			},
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "git":
				return gitErr == nil, nil
			case "gitdaemon":
				if gitErr != nil {
					return false, nil
				}
				// "git daemon" is a separate program some git packages leave out.
				out, err := exec.Command("git", "--exec-path").Output()
				if err != nil {
					return false, nil
				}
				_, err = os.Stat(filepath.Join(strings.TrimSpace(string(out)), "git-daemon"))
				return err == nil, nil
			case "gpg":
				_, err := exec.LookPath("gpg")
				return err == nil, nil
			case "go":
				return goErr == nil, nil
			case "python3":
				return pyErr == nil, nil
			case "tsc": // the compiler and node, which runs the TypeScript clients
				return tsc != "" && nodeErr == nil, nil
			case "postgres":
				// PostgreSQL server binaries, or a server in $DOME_PGTEST_URL.
				if os.Getenv(pgtest.EnvURL) != "" {
					return true, nil
				}
				_, err := pgtest.FindBin()
				if err != nil && os.Getenv("CI") == "true" {
					return false, fmt.Errorf("%v (CI=true: the PostgreSQL tests must run; .ci/run installs postgresql)", err)
				}
				return err == nil, nil
			case "sandbox":
				// bubblewrap with working user namespaces (.ci/run installs it).
				_, err := sandbox.New(context.Background(), sandbox.Options{})
				if err != nil && os.Getenv("CI") == "true" {
					return false, fmt.Errorf("%v (CI=true: the sandbox tests must run; .ci/run installs bubblewrap)", err)
				}
				return err == nil, nil
			case "root":
				// mknod and other privileged set-ups of a story.
				return os.Geteuid() == 0, nil
			case "shared":
				_, err := os.Stat(shared)
				return err == nil, nil
			}
			return false, nil
		},
	}
}

func gitDaemon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gitdaemon DIR")
	}
	base := ts.MkAbs(args[0])
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.Fatalf("find a free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack", "--base-path="+base,
		"--listen=127.0.0.1", "--port="+strconv.Itoa(port), base)
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		ts.Fatalf("start git daemon: %v", err)
	}
	ts.Defer(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("git daemon did not listen on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Setenv("GITD", "git://"+addr)
}

func forgeProposal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: forgeproposal IN DIFF OUT ID")
	}
	var doc struct {
		Header  artifact.Header     `json:"header"`
		Payload stack.PatchProposal `json:"payload"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc); err != nil {
		ts.Fatalf("forgeproposal: %s: %v", args[0], err)
	}
	diff := ts.ReadFile(args[1])
	doc.Payload.DiffUnified, doc.Payload.DiffRef = diff, ""
	doc.Payload.DiffDigest = canonical.Digest([]byte(diff))
	doc.Header.InputsHash = doc.Payload.DiffDigest
	doc.Payload.ProposalID, doc.Header.ObjectID = args[3], args[3]
	doc.Payload.IdempotencyKey = "idem-" + args[3]
	doc.Header.Signature, doc.Header.KID = "", ""
	out, _, err := stack.Seal(doc.Header, doc.Payload, nil)
	if err != nil {
		ts.Fatalf("forgeproposal: %v", err)
	}
	if err := os.WriteFile(ts.MkAbs(args[2]), out, 0o644); err != nil {
		ts.Fatalf("forgeproposal: %v", err)
	}
}

func pgDatabase(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pgdatabase")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var c *pgtest.Cluster
	if u := os.Getenv(pgtest.EnvURL); u != "" {
		pu, err := url.Parse(u)
		if err != nil {
			ts.Fatalf("$%s: %v", pgtest.EnvURL, err)
		}
		c = pgtest.External(pu)
	} else {
		var err error
		c, err = pgtest.Start(ctx)
		if err != nil {
			ts.Fatalf("%v", err)
		}
		ts.Defer(func() { c.Close() })
	}
	dbURL, drop, err := c.CreateDatabase(ctx, "script")
	if err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Defer(func() { drop(context.Background()) })
	ts.Setenv("DATABASE_URL", dbURL)
	_, rest, _ := strings.Cut(dbURL, "://")
	ts.Setenv("DATABASE_URL_REST", rest) // the URL after "postgres://"
}

func releaseTag(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: releasetag TOOL VERSION [REV]")
	}
	tool, version, rev := args[0], args[1], "HEAD"
	if len(args) == 3 {
		rev = args[2]
	}
	git := func(a ...string) string {
		cmd := exec.Command("git", a...)
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = os.Environ()
		for _, k := range []string{"HOME", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "TZ"} {
			cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			ts.Fatalf("git %s: %v\n%s", strings.Join(a, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := git("rev-parse", rev+"^{commit}")
	tree := "4b825dc642cb6eb9a060e54bf8d69288fbee4904" // the empty tree, for a tool not in the commit
	if out, err := exec.Command("git", "-C", ts.MkAbs("."), "rev-parse", "-q", "--verify", commit+":registry/tools/"+tool).Output(); err == nil {
		tree = strings.TrimSpace(string(out))
	}
	record := fmt.Sprintf(`{"breaking_changes":[],"canonicalization":"jcs-rfc8785","commit":%q,"manifests":{},"profiles":{},"schema_version":"dome.release_record/v1","tool_id":%q,"tool_tree":%q,"version":%q}`+"\n", commit, tool, tree, version)
	f := filepath.Join(ts.MkAbs("."), ".release-record.tmp")
	if err := os.WriteFile(f, []byte(record), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
	defer os.Remove(f)
	git("tag", "-a", "-F", f, "registry/"+tool+"/"+version, commit)
}

func pgpKey(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pgpkey NAME")
	}
	e, err := openpgp.NewEntity(args[0], "dome test key", args[0]+"@dome.invalid", nil)
	if err != nil {
		ts.Fatalf("pgpkey: %v", err)
	}
	var priv, pub bytes.Buffer
	w, _ := armor.Encode(&priv, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivate(w, nil); err != nil {
		ts.Fatalf("pgpkey: %v", err)
	}
	w.Close()
	w, _ = armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err := e.Serialize(w); err != nil {
		ts.Fatalf("pgpkey: %v", err)
	}
	w.Close()
	if err := os.WriteFile(ts.MkAbs(args[0]+".key"), priv.Bytes(), 0o600); err != nil {
		ts.Fatalf("pgpkey: %v", err)
	}
	if err := os.WriteFile(ts.MkAbs(args[0]+".pub"), pub.Bytes(), 0o644); err != nil {
		ts.Fatalf("pgpkey: %v", err)
	}
	ts.Setenv(strings.ToUpper(args[0])+"_KEYID", fmt.Sprintf("%016X", e.PrimaryKey.KeyId))
}
