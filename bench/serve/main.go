// Command serve benchmarks dome serve: wrk at 64 connections on
// loopback against GET /actions/{name}/versions/{version} (every answer
// carries a verification result) over the git store and over the PostgreSQL
// store, side by side with nginx serving the very same JSON bodies as
// static files: the floor, an HTTP server that does no work per request.
//
// The registry holds -actions x -versions signed versions; wrk's Lua script
// walks every one of their paths in turn. Before measuring it checks that
// dome's bodies and nginx's are byte-identical and verified. The targets
// are dome at least 50% of nginx's requests/s, p99 under 10 ms. Every
// server runs once per round, in an order rotating from round to round; the
// rows give medians over the rounds with their ranges, dome / nginx in
// requests/s (nginx time / dome time) and the load average.
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

	"github.com/dome-registry/dome/internal/benchrun"
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
	rounds      int
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
	flag.IntVar(&c.rounds, "rounds", 3, "rounds: every server measured once per round")
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

	// dome over the git store: publish through the API, read every body
	// back (verified).
	repo := filepath.Join(c.work, "actions.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", repo).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v\n%s", err, out)
	}
	gitStore := "git:" + repo
	bodies, publish, err := publishDome(ctx, c, "git store", gitStore, trusted, docs, paths, nil)
	if err != nil {
		return err
	}
	var targets []target
	gitModes := []mode{
		{label: "watching the branch ref with inotify (default)"},
		oneProc(mode{label: "watching the branch ref with inotify (default)"}),
		{label: "--watch=false: branch head read per request", args: []string{"--watch=false"}},
	}
	if c.revalidate > 0 {
		gitModes = append(gitModes, mode{label: "--watch=false --revalidate " + c.revalidate.String(), args: []string{"--watch=false", "--revalidate", c.revalidate.String()}})
	}
	for _, m := range gitModes {
		targets = append(targets, domeTarget(ctx, c, "git store", gitStore, trusted, script, m))
	}
	targets[0].note = fmt.Sprintf("publish %d versions: %s", len(paths), publish.Round(time.Millisecond))

	// dome over PostgreSQL: a throwaway cluster, the same bodies.
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var skipped []result
	cl, err := pgtest.Start(sctx)
	switch {
	case errors.Is(err, pgtest.ErrNoServer):
		skipped = append(skipped, result{label: "postgres store", skipped: err.Error()})
	case err != nil:
		return err
	default:
		defer cl.Close()
		url, _, err := cl.CreateDatabase(sctx, "bench_serve")
		if err != nil {
			return err
		}
		if _, publish, err = publishDome(ctx, c, "postgres store", url, trusted, docs, paths, bodies); err != nil {
			return err
		}
		first := len(targets)
		for _, m := range []mode{
			{label: "watching LISTEN/NOTIFY (default)"},
			oneProc(mode{label: "watching LISTEN/NOTIFY (default)"}),
			{label: "--watch=false: store read per request", args: []string{"--watch=false"}},
		} {
			targets = append(targets, domeTarget(ctx, c, "postgres store", url, trusted, script, m))
		}
		targets[first].note = fmt.Sprintf("publish %d versions: %s", len(paths), publish.Round(time.Millisecond))
	}

	// nginx over the same bodies as static files: started once, measured
	// in turn with the others.
	nginx, stopNginx, err := startNginx(c, paths, bodies)
	if err != nil {
		return err
	}
	defer stopNginx()
	targets = append(targets, target{label: "nginx", measure: func() (result, error) { return runWrk(ctx, c, nginx, script) }})

	// Rounds: every target once per round, starting one further each round
	// (as internal/benchrun interleaves), so that load from elsewhere lands
	// on dome and nginx alike.
	fmt.Printf("load average at start: %s\n", benchrun.Load())
	res := make([][]result, len(targets))
	for r := 0; r < c.rounds; r++ {
		for i := range targets {
			k := (i + r) % len(targets)
			out, err := targets[k].measure()
			if err != nil {
				return fmt.Errorf("%s: %w", targets[k].label, err)
			}
			res[k] = append(res[k], out)
		}
	}
	var doms []series
	for i, t := range targets[:len(targets)-1] {
		doms = append(doms, series{label: t.label, note: t.note, runs: res[i]})
	}
	for _, sk := range skipped {
		doms = append(doms, series{label: sk.label, skipped: sk.skipped})
	}
	report(c, doms, series{label: "nginx", runs: res[len(res)-1]})
	return nil
}

// target is one server configuration measured in each round.
type target struct {
	label, note string
	measure     func() (result, error)
}

// series is a target's measurements over the rounds.
type series struct {
	label, note, skipped string
	runs                 []result
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

// publishDome publishes the documents through the API of a dome serve on
// store and reads every body back: it must verify, and equal want when
// given. It returns the bodies and how long publishing took.
func publishDome(ctx context.Context, c config, label, store, trusted string, docs map[string][]byte, paths []string, want map[string][]byte) (map[string][]byte, time.Duration, error) {
	logFile := filepath.Join(c.work, fmt.Sprintf("dome-%s-publish.log", strings.ReplaceAll(label, " ", "-")))
	srv, err := startDome(c, store, trusted, logFile, mode{})
	if err != nil {
		return nil, 0, err
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
			return nil, 0, fmt.Errorf("%s: publish %s: %w", label, p, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return nil, 0, fmt.Errorf("%s: publish %s: status %d", label, p, resp.StatusCode)
		}
	}
	publish := time.Since(start)
	bodies := map[string][]byte{}
	for _, p := range paths {
		b, err := get(client, srv.base+p)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", label, err)
		}
		if !bytes.Contains(b, []byte(`"verified":true`)) {
			return nil, 0, fmt.Errorf("%s: %s does not verify: %s", label, p, b)
		}
		if want != nil && !bytes.Equal(b, want[p]) {
			return nil, 0, fmt.Errorf("%s: %s differs from the git store's body:\n%s\n%s", label, p, b, want[p])
		}
		bodies[p] = b
	}
	return bodies, publish, nil
}

// logs numbers the servers' log files.
var logs int

// domeTarget measures a fresh dome serve on store in mode m.
func domeTarget(ctx context.Context, c config, label, store, trusted, script string, m mode) target {
	return target{label: label + ", " + m.label, measure: func() (result, error) {
		logs++
		logFile := filepath.Join(c.work, fmt.Sprintf("dome-serve-%03d.log", logs))
		srv, err := startDome(c, store, trusted, logFile, m)
		if err != nil {
			return result{}, err
		}
		defer srv.stop()
		return runWrk(ctx, c, srv.base, script)
	}}
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

// startNginx serves bodies as static files; it returns nginx's base URL and
// a function that stops it.
func startNginx(c config, paths []string, bodies map[string][]byte) (string, func(), error) {
	// nginx's workers run as an unprivileged user when started as root:
	// keep everything they read under a world-readable temporary directory.
	dir, err := os.MkdirTemp("", "dome-bench-nginx-")
	if err != nil {
		return "", nil, err
	}
	must(os.Chmod(dir, 0o755))
	root := filepath.Join(dir, "root")
	for _, p := range paths {
		f := filepath.Join(root, filepath.FromSlash(p))
		must(os.MkdirAll(filepath.Dir(f), 0o755))
		must(os.WriteFile(f, bodies[p], 0o644))
	}
	port, err := freePort()
	if err != nil {
		return "", nil, err
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
		return "", nil, err
	}
	srv := &server{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	stop := func() { srv.stop(); os.RemoveAll(dir) }
	client := &http.Client{Timeout: 5 * time.Second}
	var b []byte
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, err = get(client, srv.base+paths[0]); err == nil || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("nginx: %w\n%s", err, stderr.Bytes())
	}
	if !bytes.Equal(b, bodies[paths[0]]) {
		stop()
		return "", nil, fmt.Errorf("nginx serves other bytes than dome for %s", paths[0])
	}
	return srv.base, stop, nil
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

func report(c config, doms []series, floor series) {
	fmt.Printf("wrk -t%d -c%d -d%s --latency, %d versions (%d actions x %d), each answer verified; dome access log %v; %d rounds, every server once per round in rotating order\n",
		c.threads, c.connections, c.duration, c.actions*c.versions, c.actions, c.versions, map[bool]string{true: "on (to a file)", false: "off"}[c.accessLog], c.rounds)
	var t benchrun.Table
	t.Row("workload: GET /actions/{name}/versions/{version}", "dome req/s", "dome p50", "dome p99", "dome/nginx req/s", "floor: nginx static files req/s", "nginx p99")
	fr, fp99 := floor.dist(func(r result) float64 { return r.rps }), floor.dist(func(r result) float64 { return r.p99.Seconds() })
	var verdicts []string
	for _, d := range doms {
		if d.skipped != "" {
			t.Row(d.label, "skipped: "+d.skipped)
			verdicts = append(verdicts, d.label+" SKIPPED")
			continue
		}
		rps, p50, p99 := d.dist(func(r result) float64 { return r.rps }), d.dist(func(r result) float64 { return r.p50.Seconds() }), d.dist(func(r result) float64 { return r.p99.Seconds() })
		ratio := rps.Median / fr.Median
		label := d.label
		var errs []string
		for _, r := range d.runs {
			if r.errors != "" {
				errs = append(errs, r.errors)
			}
		}
		if len(errs) > 0 {
			label += " (" + strings.Join(errs, "; ") + ")"
		}
		t.Row(label, reqs(rps), benchrun.Ms(p50), benchrun.Ms(p99), fmt.Sprintf("%.2fx", ratio), reqs(fr), benchrun.Ms(fp99))
		ok := ratio >= 0.5 && p99.Median < 0.010 && len(errs) == 0
		verdicts = append(verdicts, fmt.Sprintf("%s %s", d.label, map[bool]string{true: "met", false: "MISSED"}[ok]))
		if d.note != "" {
			t.Row("  (" + d.note + ")")
		}
	}
	t.Print(os.Stdout)
	fmt.Printf("targets (>= 0.50x nginx req/s, median p99 < 10 ms): %s\n", strings.Join(verdicts, "; "))
	fmt.Printf("(medians over the rounds, ranges in brackets; load average at the end: %s)\n", benchrun.Load())
}

// dist is the median and range of one figure over the rounds.
func (s series) dist(f func(result) float64) benchrun.Dist {
	var xs benchrun.Series
	for _, r := range s.runs {
		xs = append(xs, benchrun.Sample{Wall: time.Duration(f(r) * 1e9)})
	}
	return xs.Wall()
}

func reqs(d benchrun.Dist) string {
	return fmt.Sprintf("%.0f [%.0f-%.0f]", d.Median, d.Min, d.Max)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}
