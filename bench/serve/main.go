// Command serve benchmarks dome serve (issue 9): wrk at 64 connections on
// loopback against GET /actions/{name}/versions/{version} (every answer
// carries a verification result) over the git store and over the PostgreSQL
// store, side by side with nginx serving the very same JSON bodies as
// static files: the floor, an HTTP server that does no work per request.
//
// The registry holds -actions x -versions signed versions; wrk's Lua script
// walks every one of their paths in turn. Before measuring it checks that
// dome's bodies and nginx's are byte-identical and verified. The targets of
// issue 9: dome at least 50% of nginx's requests/s, p99 under 10 ms.
//
// It prints "workload | dome | peer | ratio | floor" rows.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/signing"
)

const apiKey = "bench-serve-publish-key-0123456789"

type config struct {
	dome        string
	work        string
	connections int
	threads     int
	duration    time.Duration
	warmup      time.Duration
	actions     int
	versions    int
	accessLog   bool
	revalidate  time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.dome, "dome", os.Getenv("DOME_BIN"), "dome binary")
	flag.StringVar(&c.work, "work", "bench/.work/serve", "work directory")
	flag.IntVar(&c.connections, "c", 64, "wrk connections")
	flag.IntVar(&c.threads, "t", 2, "wrk threads")
	flag.DurationVar(&c.duration, "d", 10*time.Second, "measured duration per server")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured warm-up per server")
	flag.IntVar(&c.actions, "actions", 20, "actions in the registry")
	flag.IntVar(&c.versions, "versions", 5, "versions per action")
	flag.BoolVar(&c.accessLog, "access-log", true, "dome serve with its access log (to a file), as deployed")
	flag.DurationVar(&c.revalidate, "revalidate", time.Second, "also measure the git store with dome serve --revalidate D (0: not)")
	flag.Parse()
	if c.dome == "" {
		fail("set -dome or DOME_BIN")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/serve:", msg)
	os.Exit(1)
}

func run(ctx context.Context, c config) error {
	for _, tool := range []string{"wrk", "nginx"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found (bench/serve/run.sh installs it: apt-get install -y wrk nginx)", tool)
		}
	}
	abs := func(p string) string { a, err := filepath.Abs(p); must(err); return a }
	c.dome, c.work = abs(c.dome), abs(c.work)
	must(os.RemoveAll(c.work))
	must(os.MkdirAll(c.work, 0o755))

	// A test-only key, trusted keys, and the signed documents.
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, "dome bench/serve: test-only key")
	key := signing.PrivateKey{KID: "bench-1", Key: ed25519.NewKeyFromSeed(seed)}
	trusted := filepath.Join(c.work, "trusted.json")
	tk, _ := json.Marshal([]signing.TrustedKeyEntry{key.Public().Entry()})
	must(os.WriteFile(trusted, tk, 0o644))
	docs, paths := documents(key, c.actions, c.versions)
	script := filepath.Join(c.work, "paths.lua")
	must(os.WriteFile(script, luaScript(paths), 0o644))

	var results []result
	// dome over the git store.
	repo := filepath.Join(c.work, "actions.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", repo).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v\n%s", err, out)
	}
	gitModes := []mode{
		{label: "watching the branch ref with inotify (default)"},
		oneProc(mode{label: "watching the branch ref with inotify (default)"}),
		{label: "--watch=false: branch head read per request", args: []string{"--watch=false"}},
	}
	if c.revalidate > 0 {
		gitModes = append(gitModes, mode{label: "--watch=false --revalidate " + c.revalidate.String(), args: []string{"--watch=false", "--revalidate", c.revalidate.String()}})
	}
	gitRes, bodies, err := benchDome(ctx, c, "git store", "git:"+repo, trusted, docs, paths, script, nil, gitModes)
	if err != nil {
		return err
	}
	results = append(results, gitRes...)

	// dome over PostgreSQL: a throwaway cluster.
	pgRes, err := benchPostgres(ctx, c, trusted, docs, paths, script, bodies)
	if err != nil {
		return err
	}
	results = append(results, pgRes...)

	// nginx over the same bodies as static files.
	nginxRes, err := benchNginx(ctx, c, paths, script, bodies)
	if err != nil {
		return err
	}
	report(c, results, nginxRes)
	return nil
}

// documents signs actions x versions action documents.
func documents(key signing.PrivateKey, actions, versions int) (map[string][]byte, []string) {
	docs := map[string][]byte{}
	var paths []string
	for a := 0; a < actions; a++ {
		name := fmt.Sprintf("bench.action-%02d", a)
		for v := 0; v < versions; v++ {
			version := fmt.Sprintf("1.%d.0", v)
			doc := map[string]any{
				"name": name, "version": version,
				"description": fmt.Sprintf("Benchmark action %d, version %s: moves a file from A to B.", a, version),
				"input": map[string]any{"type": "object", "required": []string{"from", "to"}, "properties": map[string]any{
					"from":      map[string]any{"type": "string", "description": "source path"},
					"to":        map[string]any{"type": "string", "description": "destination path"},
					"overwrite": map[string]any{"type": "boolean", "default": false},
				}},
				"output": map[string]any{"type": "object", "properties": map[string]any{"moved": map[string]any{"type": "boolean"}, "bytes": map[string]any{"type": "integer"}}},
			}
			raw, _ := json.Marshal(doc)
			signed, err := action.Sign(key, raw)
			must(err)
			p := "/actions/" + name + "/versions/" + version
			docs[p] = signed
			paths = append(paths, p)
		}
	}
	return docs, paths
}

func luaScript(paths []string) []byte {
	var b bytes.Buffer
	b.WriteString("-- every version path in turn, from a per-thread offset\npaths = {\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "  %q,\n", p)
	}
	b.WriteString("}\ni = 0\nsetup = function(thread) thread:set(\"i\", math.random(#paths)) end\n")
	b.WriteString("request = function()\n  i = i + 1\n  return wrk.format(\"GET\", paths[(i % #paths) + 1])\nend\n")
	return b.Bytes()
}

// server is a process under test.
type server struct {
	cmd  *exec.Cmd
	base string
}

func (s *server) stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// startDome runs dome serve on a free port and waits for its "listening"
// log record.
// mode is one way to run dome serve: a label and extra flags.
type mode struct {
	label string
	args  []string
	env   []string // extra environment, e.g. GOMAXPROCS=1
}

// oneProc is the same mode with the Go scheduler on one core: wrk's two
// threads and the server share this machine's two cores, and a server
// whose goroutines spread over both loses its tail to that contention.
func oneProc(m mode) mode {
	return mode{label: m.label + ", GOMAXPROCS=1", args: m.args, env: []string{"GOMAXPROCS=1"}}
}

func startDome(c config, store, trusted, logFile string, m mode) (*server, error) {
	args := append([]string{"serve", "--store", store, "--addr", "127.0.0.1:0", "--trusted", trusted}, m.args...)
	if !c.accessLog {
		args = append(args, "--access-log=false")
	}
	cmd := exec.Command(c.dome, args...)
	cmd.Env = append(append(os.Environ(), "ACTION_REGISTRY_API_KEY="+apiKey), m.env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	log, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	go func() {
		defer log.Close()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Bytes()
			log.Write(append(line, '\n'))
			if !found {
				var rec struct{ Msg, Addr string }
				if json.Unmarshal(line, &rec) == nil && rec.Msg == "listening" {
					found = true
					addr <- rec.Addr
				}
			}
		}
		if !found {
			close(addr)
		}
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			cmd.Wait()
			b, _ := os.ReadFile(logFile)
			return nil, fmt.Errorf("dome serve --store %s exited: %s", store, b)
		}
		return &server{cmd: cmd, base: "http://" + a}, nil
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("dome serve --store %s: no listening record in 60 s", store)
	}
}

// benchDome publishes the documents through the API, reads every body back
// (it must verify, and equal want when given) and runs wrk for each mode on
// a fresh server (the first mode's server publishes).
func benchDome(ctx context.Context, c config, label, store, trusted string, docs map[string][]byte, paths []string, script string, want map[string][]byte, modes []mode) ([]result, map[string][]byte, error) {
	logName := func(i int) string {
		return filepath.Join(c.work, fmt.Sprintf("dome-%s-%d.log", strings.ReplaceAll(label, " ", "-"), i))
	}
	srv, err := startDome(c, store, trusted, logName(0), modes[0])
	if err != nil {
		return nil, nil, err
	}
	defer srv.stop()
	client := &http.Client{Timeout: 30 * time.Second}
	start := time.Now()
	for _, p := range paths {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.base+p, bytes.NewReader(docs[p]))
		req.Header.Set("X-API-Key", apiKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: publish %s: %w", label, p, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return nil, nil, fmt.Errorf("%s: publish %s: status %d", label, p, resp.StatusCode)
		}
	}
	publish := time.Since(start)
	bodies := map[string][]byte{}
	for _, p := range paths {
		b, err := get(client, srv.base+p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", label, err)
		}
		if !bytes.Contains(b, []byte(`"verified":true`)) {
			return nil, nil, fmt.Errorf("%s: %s does not verify: %s", label, p, b)
		}
		if want != nil && !bytes.Equal(b, want[p]) {
			return nil, nil, fmt.Errorf("%s: %s differs from the git store's body:\n%s\n%s", label, p, b, want[p])
		}
		bodies[p] = b
	}
	r, err := runWrk(ctx, c, srv.base, script)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", label, err)
	}
	srv.stop()
	r.label = label + ", " + modes[0].label
	r.note = fmt.Sprintf("publish %d versions: %s", len(paths), publish.Round(time.Millisecond))
	out := []result{r}
	for i, m := range modes[1:] {
		srv, err := startDome(c, store, trusted, logName(i+1), m)
		if err != nil {
			return nil, nil, err
		}
		r, err := runWrk(ctx, c, srv.base, script)
		srv.stop()
		if err != nil {
			return nil, nil, fmt.Errorf("%s, %s: %w", label, m.label, err)
		}
		r.label = label + ", " + m.label
		out = append(out, r)
	}
	return out, bodies, nil
}

func benchPostgres(ctx context.Context, c config, trusted string, docs map[string][]byte, paths []string, script string, want map[string][]byte) ([]result, error) {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cl, err := pgtest.Start(sctx)
	if errors.Is(err, pgtest.ErrNoServer) {
		return []result{{label: "postgres store", skipped: err.Error()}}, nil
	}
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	url, _, err := cl.CreateDatabase(sctx, "bench_serve")
	if err != nil {
		return nil, err
	}
	pgModes := []mode{
		{label: "watching LISTEN/NOTIFY (default)"},
		oneProc(mode{label: "watching LISTEN/NOTIFY (default)"}),
		{label: "--watch=false: store read per request", args: []string{"--watch=false"}},
	}
	r, _, err := benchDome(ctx, c, "postgres store", url, trusted, docs, paths, script, want, pgModes)
	return r, err
}

func get(client *http.Client, url string) ([]byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("GET %s: status %d: %s", url, resp.StatusCode, b)
	}
	return b, err
}

// benchNginx serves bodies as static files and runs wrk against nginx.
func benchNginx(ctx context.Context, c config, paths []string, script string, bodies map[string][]byte) (result, error) {
	// nginx's workers run as an unprivileged user when started as root:
	// keep everything they read under a world-readable temporary directory.
	dir, err := os.MkdirTemp("", "dome-bench-nginx-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	must(os.Chmod(dir, 0o755))
	root := filepath.Join(dir, "root")
	for _, p := range paths {
		f := filepath.Join(root, filepath.FromSlash(p))
		must(os.MkdirAll(filepath.Dir(f), 0o755))
		must(os.WriteFile(f, bodies[p], 0o644))
	}
	port, err := freePort()
	if err != nil {
		return result{}, err
	}
	conf := fmt.Sprintf(`worker_processes auto;
error_log %[1]s/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    default_type application/json;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    open_file_cache max=10000 inactive=60s;
    open_file_cache_valid 60s;
    client_body_temp_path %[1]s/tmp-body;
    proxy_temp_path %[1]s/tmp-proxy;
    fastcgi_temp_path %[1]s/tmp-fastcgi;
    uwsgi_temp_path %[1]s/tmp-uwsgi;
    scgi_temp_path %[1]s/tmp-scgi;
    server {
        listen 127.0.0.1:%[2]d;
        root %[3]s;
        location / { try_files $uri =404; }
    }
}
`, dir, port, root)
	confFile := filepath.Join(dir, "nginx.conf")
	must(os.WriteFile(confFile, []byte(conf), 0o644))
	cmd := exec.Command("nginx", "-p", dir, "-c", confFile, "-g", "daemon off;")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	srv := &server{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	defer srv.stop()
	client := &http.Client{Timeout: 5 * time.Second}
	var b []byte
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, err = get(client, srv.base+paths[0]); err == nil || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		return result{}, fmt.Errorf("nginx: %w\n%s", err, stderr.Bytes())
	}
	if !bytes.Equal(b, bodies[paths[0]]) {
		return result{}, fmt.Errorf("nginx serves other bytes than dome for %s", paths[0])
	}
	r, err := runWrk(ctx, c, srv.base, script)
	if err != nil {
		return result{}, fmt.Errorf("nginx: %w", err)
	}
	r.label = "nginx"
	return r, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// result is one wrk measurement.
type result struct {
	label, note, skipped string
	rps                  float64
	p50, p99             time.Duration
	errors               string
}

var (
	reRPS     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	reP       = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	reNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	reSockErr = regexp.MustCompile(`Socket errors: .*`)
)

func runWrk(ctx context.Context, c config, base, script string) (result, error) {
	wrk := func(d time.Duration) (string, error) {
		cmd := exec.CommandContext(ctx, "wrk", "-t", strconv.Itoa(c.threads), "-c", strconv.Itoa(c.connections),
			"-d", fmt.Sprintf("%ds", int(d.Seconds())), "--latency", "--timeout", "5s", "-s", script, base)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("wrk: %v\n%s", err, out)
		}
		return string(out), nil
	}
	if c.warmup >= time.Second {
		if _, err := wrk(c.warmup); err != nil {
			return result{}, err
		}
	}
	out, err := wrk(c.duration)
	if err != nil {
		return result{}, err
	}
	var r result
	m := reRPS.FindStringSubmatch(out)
	if m == nil {
		return result{}, fmt.Errorf("no Requests/sec in wrk's output:\n%s", out)
	}
	r.rps, _ = strconv.ParseFloat(m[1], 64)
	for _, m := range reP.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		unit := map[string]float64{"us": 1e3, "ms": 1e6, "s": 1e9}[m[3]]
		d := time.Duration(v * unit)
		if m[1] == "50" {
			r.p50 = d
		} else {
			r.p99 = d
		}
	}
	var errs []string
	if m := reNon2xx.FindStringSubmatch(out); m != nil {
		errs = append(errs, m[1]+" non-2xx responses")
	}
	if m := reSockErr.FindString(out); m != "" {
		errs = append(errs, m)
	}
	r.errors = strings.Join(errs, "; ")
	return r, nil
}

func report(c config, doms []result, floor result) {
	fmt.Printf("wrk -t%d -c%d -d%s --latency, %d versions (%d actions x %d), each answer verified; dome access log %v\n",
		c.threads, c.connections, c.duration, c.actions*c.versions, c.actions, c.versions, map[bool]string{true: "on (to a file)", false: "off"}[c.accessLog])
	fmt.Println("workload | dome | peer | ratio | floor")
	fl := fmt.Sprintf("nginx static files %.0f req/s, p50 %s, p99 %s", floor.rps, ms(floor.p50), ms(floor.p99))
	var verdicts []string
	for _, r := range doms {
		w := "GET /actions/{name}/versions/{version}, " + r.label
		if r.skipped != "" {
			fmt.Printf("%s | skipped: %s | - | - | %s\n", w, r.skipped, fl)
			verdicts = append(verdicts, r.label+" SKIPPED")
			continue
		}
		ratio := r.rps / floor.rps
		d := fmt.Sprintf("%.0f req/s, p50 %s, p99 %s", r.rps, ms(r.p50), ms(r.p99))
		if r.errors != "" {
			d += " (" + r.errors + ")"
		}
		fmt.Printf("%s | %s | - | %.2fx nginx req/s | %s\n", w, d, ratio, fl)
		ok := ratio >= 0.5 && r.p99 < 10*time.Millisecond && r.errors == ""
		verdicts = append(verdicts, fmt.Sprintf("%s %s", r.label, map[bool]string{true: "PASS", false: "FAIL"}[ok]))
		if r.note != "" {
			fmt.Printf("  (%s: %s)\n", r.label, r.note)
		}
	}
	fmt.Printf("targets (>= 0.50x nginx req/s, p99 < 10 ms; nginx's own p99 in this run: %s): %s\n", ms(floor.p99), strings.Join(verdicts, "; "))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}
