package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoServer means no PostgreSQL server binaries were found.
var ErrNoServer = errors.New("no PostgreSQL server binaries (initdb, postgres) found")

// EnvBin names a directory holding initdb and postgres; EnvURL an admin URL of
// an existing server to create test databases on instead of a local cluster.
const (
	EnvBin = "DOME_PG_BIN"
	EnvURL = "DOME_PGTEST_URL"
)

const superuser = "postgres"

// Cluster is a running PostgreSQL server for tests: a throwaway local cluster
// (Start) or, with DOME_PGTEST_URL, an existing server.
type Cluster struct {
	dir      string // everything of a local cluster: data/, sock/, pwfile, server.log
	port     int
	password string
	external *url.URL // admin URL of an existing server, nil for a local cluster
	bin      string   // directory of initdb and postgres
	cred     *syscall.Credential

	srv *server // the running postgres process of a local cluster
	seq atomic.Int64
}

// server is one postgres process.
type server struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error
	stop    sync.Once
}

// Start finds the server binaries, runs initdb into a new temporary directory
// and starts postgres on a free loopback port. It returns an error wrapping
// ErrNoServer when the binaries are missing. Close stops the server and
// removes the directory.
func Start(ctx context.Context) (*Cluster, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	base := os.TempDir()
	if cred != nil && !traversable(base) {
		base = "/tmp" // the server user must reach its directory
	}
	dir, err := os.MkdirTemp(base, "dome-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{dir: dir, password: randomHex(16), bin: bin, cred: cred}
	if err := c.initdb(ctx, bin, cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Another process may take the free port between our probe and the
	// server's bind: try a few ports.
	for attempt := 0; ; attempt++ {
		port, perr := freePort()
		if perr != nil {
			os.RemoveAll(dir)
			return nil, perr
		}
		err = c.startServer(ctx, port)
		if err == nil {
			return c, nil
		}
		if attempt == 4 || !strings.Contains(err.Error(), "in use") {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// FindBin returns the directory holding initdb and postgres: $DOME_PG_BIN,
// then the directory initdb on PATH resolves to (following symlinks such as
// /usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb), then the newest
// /usr/lib/postgresql/<major>/bin or /usr/pgsql-<major>/bin.
func FindBin() (string, error) {
	has := func(dir string) bool {
		for _, name := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv(EnvBin); dir != "" {
		if has(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("%w in $%s=%s", ErrNoServer, EnvBin, dir)
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(r)) {
			return filepath.Dir(r), nil
		}
		if has(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	var dirs []string
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"} {
		m, _ := filepath.Glob(pattern)
		dirs = append(dirs, m...)
	}
	major := func(dir string) int {
		s := filepath.Base(filepath.Dir(dir))
		n, _ := strconv.Atoi(strings.TrimPrefix(s, "pgsql-"))
		return n
	}
	sort.SliceStable(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w on PATH, in /usr/lib/postgresql/*/bin or /usr/pgsql-*/bin; install them (Debian: apt-get install -y postgresql) or set $%s", ErrNoServer, EnvBin)
}

// serverCredential returns nil when the server can run as the current user,
// else the credential of an unprivileged user to run it as (initdb and
// postgres refuse to run as root).
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
	}
	return nil, errors.New(`pgtest: running as root and neither a "postgres" nor a "nobody" user exists to run the server as (initdb refuses root); create one (useradd --system postgres)`)
}

// traversable reports whether every directory from dir up to / lets others
// search it, so a server running as another user can reach dir's children.
func traversable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

func (c *Cluster) path(name string) string { return filepath.Join(c.dir, name) }

// serverEnv is the environment of initdb and postgres: no PG* variables of
// the caller, a fixed locale and time zone.
func serverEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LANG=C", "LC_ALL=C", "TZ=UTC"}
}

func (c *Cluster) command(ctx context.Context, cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.dir
	cmd.Env = serverEnv()
	cmd.SysProcAttr = procAttr(cred)
	return cmd
}

func (c *Cluster) chown(cred *syscall.Credential, paths ...string) error {
	if cred == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	return nil
}

func (c *Cluster) initdb(ctx context.Context, bin string, cred *syscall.Credential) error {
	if err := os.WriteFile(c.path("pwfile"), []byte(c.password+"\n"), 0o600); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := os.Mkdir(c.path("sock"), 0o700); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := c.chown(cred, c.dir, c.path("pwfile"), c.path("sock")); err != nil {
		return err
	}
	cmd := c.command(ctx, cred, filepath.Join(bin, "initdb"),
		"-D", c.path("data"), "-U", superuser, "--pwfile="+c.path("pwfile"),
		"--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: %s/initdb: %v\n%s", bin, err, tail(out, 2000))
	}
	return nil
}

func (c *Cluster) startServer(ctx context.Context, port int) error {
	bin, cred := c.bin, c.cred
	logf, err := os.OpenFile(c.path("server.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logf.Close()
	sock := c.path("sock")
	if len(sock)+len("/.s.PGSQL.65535") > 100 {
		sock = "" // too long for a Unix socket address: TCP only
	}
	// The server process is ours alone, not bound to ctx: it lives until Close.
	cmd := c.command(context.Background(), cred, filepath.Join(bin, "postgres"),
		"-D", c.path("data"), "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+sock,
		// A throwaway cluster: durability across an OS crash buys nothing.
		// Commits still wait for their WAL write, so a killed server (Kill,
		// Restart) keeps every acknowledged commit.
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "log_min_messages=warning")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start %s/postgres: %w", bin, err)
	}
	srv := &server{cmd: cmd, done: make(chan struct{})}
	c.srv, c.port = srv, port
	go func() { srv.waitErr = cmd.Wait(); close(srv.done) }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(cctx, c.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-srv.done:
			log, _ := os.ReadFile(c.path("server.log"))
			return fmt.Errorf("pgtest: postgres exited (%v) on port %d:\n%s", srv.waitErr, port, tail(log, 2000))
		case <-ctx.Done():
			c.Stop()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.Stop()
			log, _ := os.ReadFile(c.path("server.log"))
			return fmt.Errorf("pgtest: postgres on port %d not ready after 60s: %v\n%s", port, err, tail(log, 2000))
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// URL returns the connection URL of database db on this server.
func (c *Cluster) URL(db string) string {
	if c.external != nil {
		u := *c.external
		u.Path = "/" + db
		return u.String()
	}
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(superuser, c.password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the server's loopback TCP port (0 for an external server).
func (c *Cluster) Port() int { return c.port }

// Stop stops a local server (a fast shutdown: sessions are ended, nothing is
// lost) and keeps its directory. Connections fail afterwards.
func (c *Cluster) Stop() error {
	s := c.srv
	if s == nil {
		return nil
	}
	s.stop.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	return nil
}

// Kill kills a local server with SIGKILL, as a crash would: no shutdown
// checkpoint, sessions cut. Restart brings it back through crash recovery.
func (c *Cluster) Kill() {
	s := c.srv
	if s == nil {
		return
	}
	s.stop.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	})
}

// Restart starts a stopped or killed local server again on the same port
// and data directory (crash recovery replays the WAL). After a Kill the old
// server's backends may take a moment to notice and exit: Restart retries
// until ctx ends.
func (c *Cluster) Restart(ctx context.Context) error {
	if c.external != nil {
		return errors.New("pgtest: cannot restart an external server")
	}
	c.Stop()
	for {
		err := c.startServer(ctx, c.port)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last attempt: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops a local server and removes its directory.
func (c *Cluster) Close() error {
	if c.external != nil {
		return nil
	}
	c.Stop()
	return os.RemoveAll(c.dir)
}

var nonIdent = regexp.MustCompile(`[^a-z0-9]+`)

// CreateDatabase creates a new empty database and returns its URL and a
// function that drops it (ending its sessions first).
func (c *Cluster) CreateDatabase(ctx context.Context, hint string) (string, func(context.Context) error, error) {
	hint = strings.Trim(nonIdent.ReplaceAllString(strings.ToLower(hint), "_"), "_")
	name := fmt.Sprintf("t%d_%d_%s", os.Getpid(), c.seq.Add(1), hint)
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "_")
	}
	admin := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			return fmt.Errorf("pgtest: connect as admin: %w", err)
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	ident := pgx.Identifier{name}.Sanitize()
	if err := admin(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", nil, fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	drop := func(ctx context.Context) error {
		if err := admin(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("pgtest: drop database %s: %w", name, err)
		}
		return nil
	}
	return c.URL(name), drop, nil
}

// NewDatabase creates a database for t on this server, dropped when t ends.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	u, drop, err := c.CreateDatabase(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := drop(ctx); err != nil && !c.stopped() {
			t.Error(err)
		}
	})
	return u
}

func (c *Cluster) stopped() bool {
	if c.srv == nil {
		return false
	}
	select {
	case <-c.srv.done:
		return true
	default:
		return false
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
