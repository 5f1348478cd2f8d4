package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"
)

// shared is the cluster of the running test binary (see the package doc).
var shared struct {
	sync.Mutex
	inMain  bool
	started bool
	cluster *Cluster
	err     error
	skipped bool
}

// Main runs the tests of a package with one shared cluster, started on first
// use and removed when the tests end:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	shared.Lock()
	shared.inMain = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	defer shared.Unlock()
	if shared.cluster != nil {
		shared.cluster.Close()
		shared.cluster = nil
	}
	if shared.skipped {
		fmt.Fprintf(os.Stderr, "\n%s\n\n", banner(shared.err))
	}
	return code
}

// banner is the loud message of a skipped PostgreSQL test.
func banner(err error) string {
	return fmt.Sprintf("!!! PostgreSQL TESTS SKIPPED: %v.\n!!! Install PostgreSQL (apt-get install -y postgresql) to run them; in CI (CI=true) this is a failure.", err)
}

// Need skips t (or, in CI, fails it) when err says the server binaries are
// missing, and fails it for any other error.
func need(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrNoServer) && os.Getenv("CI") != "true" {
		shared.Lock()
		shared.skipped = true
		shared.Unlock()
		t.Skip(banner(err))
	}
	t.Fatal(err)
}

// Shared returns the cluster of the test binary, starting it on first use
// (DOME_PGTEST_URL: that server). Outside Main it returns a cluster of t's
// own, removed when t ends.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatalf("pgtest: $%s: %v", EnvURL, err)
		}
		return External(pu)
	}
	shared.Lock()
	if !shared.inMain {
		shared.Unlock()
		return NewCluster(t)
	}
	if !shared.started {
		shared.started = true
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		shared.cluster, shared.err = Start(ctx)
		cancel()
	}
	c, err := shared.cluster, shared.err
	shared.Unlock()
	need(t, err)
	return c
}

// External returns the existing server at adminURL (a URL of a role that
// may create databases) as a Cluster: CreateDatabase and URL work, Stop,
// Kill, Restart and Close do nothing.
func External(adminURL *url.URL) *Cluster { return &Cluster{external: adminURL} }

// NewCluster starts a local cluster of t's own (one t may stop), removed when
// t ends. It ignores DOME_PGTEST_URL.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx)
	need(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// NewDatabase returns the URL of a new database on the shared cluster,
// dropped when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return Shared(t).NewDatabase(t)
}
