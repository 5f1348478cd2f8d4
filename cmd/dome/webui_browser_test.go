package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestWebUIBrowser loads every page of the web view in headless Chromium
// (the Debian package): make demo's registry (this repository at HEAD),
// its signed actions and its stack run, then a small registry with two
// releases (one signed) and a hostile tool. For each page it checks the
// text the browser shows, takes a screenshot (kept in $DOME_UI_SCREENSHOTS
// when set), and fails on a script error, a Content-Security-Policy
// violation or a dialog; the hostile tool's script and markup must show as
// text and never run. A live run page must follow the ledger, and an ended
// run's page must carry no script.
func TestWebUIBrowser(t *testing.T) {
	chromium := findChromium(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not found")
	}
	if testing.Short() {
		t.Skip("-short: the browser test starts Chromium")
	}
	work := t.TempDir()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_AUTHOR_NAME=demo", "GIT_AUTHOR_EMAIL=demo@example.com", "GIT_COMMITTER_NAME=demo",
		"GIT_COMMITTER_EMAIL=demo@example.com", "SOURCE_DATE_EPOCH=1767225600", "GOFLAGS=-mod=mod",
		"TRUSTED_KEYS_PATH="+filepath.Join(root, "examples/actions/keys/dev-only-insecure-1.trusted.json"), "DOME_TAGGER_NAME=Release Bot", "DOME_TAGGER_EMAIL=release@dome.invalid")
	run := func(dir string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// make demo's signed actions and stack run, as scripts/demo.sh makes them.
	store := "git:" + filepath.Join(work, "actions.git")
	actions, _ := filepath.Glob(filepath.Join(root, "registry/actions/*/*.json"))
	run(root, "dome", append([]string{"action", "publish", "--store", store}, actions...)...)
	run(root, "dome", "action", "deprecate", "--store", store, "files.move@1.0.0", "--reason", "use 1.1.0: 1.0.0 drops file modes")
	stackRepo := filepath.Join(work, "stack-repo")
	writeFiles(t, stackRepo, map[string]string{
		"go.mod":         "module example.com/greet\n\ngo 1.22\n",
		"greet/greet.go": "package greet\n\n// Hello greets name.\nfunc Hello(name string) string {\n\treturn \"hello, \" + name\n}\n",
		"README.md":      "# greet\n\nA tiny module.\n",
	})
	run(stackRepo, "git", "init", "-q", "-b", "main")
	run(stackRepo, "git", "add", "-A")
	run(stackRepo, "git", "commit", "-q", "-m", "base")
	base := strings.TrimSpace(run(stackRepo, "git", "rev-parse", "HEAD"))
	policy := filepath.Join(root, "policy/stack_policy.json")
	run(stackRepo, "dome", "stack", "init", "--run", "demo", "--base", base, "--policy", policy)
	propose := func(run1 func(), id, worker, intent string) {
		run1()
		run(stackRepo, "dome", "stack", "propose", "--run", "demo", "--from-worktree", ".", "--worker", worker, "--id", id, "--intent", intent, "-o", filepath.Join(work, id+".json"))
		run(stackRepo, "git", "checkout", "-q", "--", ".")
	}
	propose(func() {
		writeFiles(t, stackRepo, map[string]string{"README.md": "# greet\n\nA tiny module that says hello.\n"})
	}, "w1-readme", "w1", "docs")
	propose(func() {
		writeFiles(t, stackRepo, map[string]string{"greet/greet.go": "package greet\n\n// Hello greets name.\nfunc Hello(name string) string {\n\treturn \"hello, \" + name\n}\n\n// Bye says goodbye to name.\nfunc Bye(name string) string {\n\treturn \"bye, \" + name\n}\n"})
	}, "w2-bye", "w2", "feature")
	propose(func() { writeFiles(t, stackRepo, map[string]string{"README.md": "# greet\n\nA module that greets.\n"}) }, "w3-readme", "w3", "docs")
	run(stackRepo, "dome", "stack", "submit", "--run", "demo", filepath.Join(work, "w1-readme.json"), filepath.Join(work, "w2-bye.json"), filepath.Join(work, "w3-readme.json"))
	run(stackRepo, "dome", "stack", "plan", "--run", "demo")
	run(stackRepo, "dome", "stack", "apply", "--run", "demo")
	run(stackRepo, "dome", "stack", "validate", "--run", "demo", "--tier", "fast")
	run(stackRepo, "dome", "keygen", "--kid", "coordinator-demo", "--out", filepath.Join(work, "keys"))
	run(stackRepo, "dome", "stack", "promote", "--run", "demo", "--to", "refs/heads/release", "--sign-key", filepath.Join(work, "keys/coordinator-demo.key"))
	// A second run that stays open: the live page follows it.
	run(stackRepo, "dome", "stack", "init", "--run", "live", "--base", base, "--policy", policy)
	writeFiles(t, stackRepo, map[string]string{"README.md": "# greet\n\nFollowed live.\n"})
	run(stackRepo, "dome", "stack", "propose", "--run", "live", "--from-worktree", ".", "--worker", "w4", "--id", "w4-live", "--intent", "docs", "-o", filepath.Join(work, "w4-live.json"))
	run(stackRepo, "git", "checkout", "-q", "--", ".")
	var status struct {
		Validations []struct {
			ReportID string `json:"report_id"`
		} `json:"validations"`
	}
	json.Unmarshal([]byte(run(stackRepo, "dome", "stack", "status", "--run", "demo", "--json")), &status)
	if len(status.Validations) != 1 {
		t.Fatalf("the demo run has %d validations", len(status.Validations))
	}

	// A registry with releases (v2.0.0 breaks and is signed) and a hostile tool.
	reg := filepath.Join(work, "registry")
	copyTree(t, filepath.Join(root, "pkg/webui/testdata/registry"), reg)
	run(reg, "git", "init", "-q", "-b", "main")
	run(reg, "git", "add", "-A")
	run(reg, "git", "commit", "-q", "-m", "registry")
	run(reg, "dome", "release", "demo", "v1.0.0")
	v2, _ := os.ReadFile(filepath.Join(root, "pkg/webui/testdata/openapi-v2.yaml"))
	writeFiles(t, reg, map[string]string{"registry/tools/demo/spec/openapi.yaml": string(v2)})
	run(reg, "git", "commit", "-q", "-am", "drop deletePet")
	keyPriv, keyPub := writePGPKey(t, work, "release")
	run(reg, "dome", "release", "demo", "v2.0.0", "--sign-key", keyPriv)
	head := strings.TrimSpace(run(reg, "git", "rev-parse", "HEAD"))

	demo := startUI(t, root, "--store", store, "--ops", filepath.Join(stackRepo, "ops/runs"), "--ui-trusted", filepath.Join(work, "keys/coordinator-demo.trusted.json"))
	hostile := startUI(t, reg, "--store", store, "--ui-keyring", keyPub)

	shots := os.Getenv("DOME_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, chromium)

	demoHead := strings.TrimSpace(run(root, "git", "rev-parse", "HEAD"))
	var demoTools []string
	var listing struct {
		Tools []struct {
			ID       string   `json:"id"`
			Profiles []string `json:"profiles"`
		} `json:"tools"`
	}
	json.Unmarshal([]byte(run(root, "dome", "registry", "list", "--json")), &listing)
	type check struct {
		path string
		want []string
	}
	pages := []check{
		{"/ui/", []string{"The registry at HEAD", "Published actions", "demo", "live"}},
		{"/ui/registry/HEAD/", []string{"Registry at " + demoHead[:12], "petstore", "inventory", "ticketing", "action-registry"}},
		{"/ui/actions/", []string{"files.move", "verified", "deprecated: use 1.1.0", "dev-only-insecure-1"}},
		{"/ui/actions/files.move/", []string{"1.1.0", "latest"}},
		{"/ui/actions/files.move/1.1.0/", []string{"verified", "Schema", "\"name\": \"files.move\""}},
		{"/ui/runs/", []string{"demo", "live"}},
		{"/ui/runs/demo/", []string{"Run demo", "ended", "promoted", "w2-bye", "w1-readme", "w3-readme", "conflict"}},
		{"/ui/runs/demo/at/3/", []string{"3 of 11", "w1-readme", "submitted"}},
		{"/ui/runs/demo/at/11/plan/", []string{"Graph", "w2-bye", "rejected", "conflict/conflict", "Selection scores"}},
		{"/ui/runs/demo/at/11/checkpoints/", []string{"w2-bye", "w1-readme", "The ref points at this head."}},
		{"/ui/runs/demo/at/11/validations/" + status.Validations[0].ReportID + "/", []string{"passed", "gofmt", "Environment"}},
		{"/ui/runs/demo/at/11/evidence/", []string{"the chain holds", "signed by coordinator-demo, verified", "present, digest matches"}},
		{"/ui/runs/demo/at/11/events/", []string{"stack.initialized", "stack.promoted"}},
	}
	for _, tl := range listing.Tools {
		demoTools = append(demoTools, tl.ID)
		pages = append(pages, check{"/ui/registry/" + demoHead + "/tools/" + tl.ID + "/", []string{tl.ID, "Operations by profile", "kept"}})
		for _, p := range tl.Profiles {
			pages = append(pages, check{"/ui/registry/" + demoHead + "/tools/" + tl.ID + "/profiles/" + p + "/", []string{"Operations kept", "Selectors"}})
		}
	}
	if len(demoTools) != 7 { // four tools and the three skill contracts
		t.Fatalf("the example registry lists %v", demoTools)
	}
	pages = append(pages, check{"/ui/registry/" + demoHead + "/tools/petstore/diff/HEAD/", []string{"no breaking change"}})
	for _, pg := range pages {
		b.check(t, demo+pg.path, shots, pg.want, nil)
	}
	// The demo run ended: its page is static.
	if n := b.eval(t, demo+"/ui/runs/demo/", `document.scripts.length`); n != float64(0) {
		t.Errorf("the ended run's page has %v scripts", n)
	}
	if n := b.eval(t, demo+"/ui/runs/demo/at/11/plan/", `document.querySelectorAll(".graph svg rect.box").length`); n != float64(4) {
		t.Errorf("the plan graph has %v boxes, want 4 (start and three proposals)", n)
	}

	hostileWant := []string{"<script>window.__domePwned='title'</script>Evil</title><h1>injected</h1>"}
	for _, pg := range []check{
		{"/ui/registry/" + head + "/", append(hostileWant, "demo", "signed by", "ok")},
		{"/ui/registry/" + head + "/tools/evil/", append(hostileWant, `<img src=x onerror="window.__domePwned='description'"><b>bold?</b>`, "<script>window.__domePwned='operationId'</script>", `"><script>window.__domePwned='attribute'</script>`)},
		{"/ui/registry/" + head + "/tools/evil/profiles/default/", []string{"</title><script>window.__domePwned='spec title'</script>", `<img src=x onerror="window.__domePwned='summary'">`, "<b>tag</b>", "{{.Title}}"}},
		{"/ui/registry/" + head + "/tools/demo/", []string{"v2.0.0", "v1.0.0", "from v1.0.0"}},
		{"/ui/registry/" + head + "/tools/demo/releases/v2.0.0/", []string{"signed by", "removed_operation", "deletePet", "the recorded tool tree, profile blobs and filtered specs reproduce"}},
		{"/ui/registry/" + head + "/tools/demo/diff/v1.0.0/", []string{"v1.0.0 → v2.0.0", "removed_operation", "deletePet"}},
	} {
		b.check(t, hostile+pg.path, shots, pg.want, []string{"injected"})
		if v := b.eval(t, hostile+pg.path, `String(window.__domePwned)`); v != "undefined" {
			t.Errorf("%s: hostile content ran: window.__domePwned = %v", pg.path, v)
		}
		if n := b.eval(t, hostile+pg.path, `document.querySelectorAll("main script, main img, main iframe, main svg[onload], main style, main h1 + h1").length`); n != float64(0) {
			t.Errorf("%s: %v hostile elements in the page", pg.path, n)
		}
	}

	// The live page follows the open run: a proposal submitted while the
	// page is open appears without a reload.
	b.open(t, demo+"/ui/runs/live/")
	if err := chromedp.Do(b.ctx, chromedp.WaitVisible(chromedp.CSS("#live"))); err != nil {
		t.Fatalf("live status: %v", err)
	}
	run(stackRepo, "dome", "stack", "submit", "--run", "live", filepath.Join(work, "w4-live.json"))
	wctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if ok, err := chromedp.Run(wctx, chromedp.Poll[bool](`document.querySelector("main").innerText.includes("w4-live")`, chromedp.WithPollingInterval(100*time.Millisecond))); err != nil || !ok {
		t.Fatalf("the live page did not show the new proposal: %v", err)
	}
	b.screenshot(t, shots, "live-run-followed")
	b.failOnProblems(t)
}

// findChromium returns the Chromium binary, skipping without one (failing
// when CI=true: .ci/run installs the Debian package).
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is needed for the web view's browser test (CI=true): apt-get install chromium")
	}
	t.Skip("chromium not installed (apt-get install chromium)")
	return ""
}

// startUI starts dome serve --ui in dir on a free port and returns its URL.
func startUI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("dome", append([]string{"serve", "--ui", "--addr", "127.0.0.1:0", "--access-log=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TRUSTED_KEYS_PATH="+filepath.Join(mustAbs(t, "../.."), "examples/actions/keys/dev-only-insecure-1.trusted.json"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			mu.Lock()
			logs.Write(append(sc.Bytes(), '\n'))
			mu.Unlock()
			var rec struct{ Msg, URL string }
			if !sent && json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" {
				addr <- rec.URL
				sent = true
			}
		}
		if !sent {
			close(addr)
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	select {
	case u, ok := <-addr:
		if !ok {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("dome serve --ui exited:\n%s", logs.String())
		}
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("dome serve --ui did not listen within 30 s")
	}
	return ""
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// browser is one headless Chromium for every page, driven over the
// DevTools protocol; it records script errors, CSP violations and dialogs.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T, path string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	b := &browser{ctx: ctx}
	// The first call starts the browser, which lives as long as the
	// context of that call: ctx itself, not one with a deadline.
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.problem("script error: " + e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError && !strings.Contains(e.Entry.Text, "favicon") {
				b.problem("console: " + e.Entry.Text)
			}
		case *page.EventJavascriptDialogOpening:
			b.problem("a dialog opened: " + e.Message)
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	})
	if err == nil {
		_, err = chromedp.Call(ctx, log.Enable, cdp.Empty{})
	}
	if err == nil {
		_, err = chromedp.Call(ctx, runtime.Enable, cdp.Empty{})
	}
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

func (b *browser) problem(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, s)
}

func (b *browser) failOnProblems(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		t.Error(p)
	}
	b.problems = nil
}

func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	var status int64
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("load %s: %v", url, err)
	}
	if resp != nil {
		status = resp.Status
	}
	if status != http.StatusOK {
		t.Fatalf("load %s: HTTP %d", url, status)
	}
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("footer"))); err != nil {
		t.Fatalf("load %s: %v", url, err)
	}
}

func (b *browser) eval(t *testing.T, url, expr string) any {
	t.Helper()
	b.open(t, url)
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](expr))
	if err != nil {
		t.Fatalf("%s: %s: %v", url, expr, err)
	}
	return v
}

var shotName = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// check loads url, checks the text the page shows (innerText: what a reader
// sees, markup shown as text included) and takes a screenshot.
func (b *browser) check(t *testing.T, url, shots string, want, notHeadings []string) {
	t.Helper()
	b.open(t, url)
	text, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s: the page does not show %q:\n%.3000s", url, w, text)
		}
	}
	for _, h := range notHeadings {
		n, _ := chromedp.Run(b.ctx, chromedp.Evaluate[float64](fmt.Sprintf(`Array.from(document.querySelectorAll("h1,h2,h3")).filter(e => e.textContent === %q).length`, h)))
		if n != 0 {
			t.Errorf("%s: markup from the spec became a heading %q", url, h)
		}
	}
	path := strings.TrimPrefix(url, "http://")
	path = path[strings.Index(path, "/"):]
	b.screenshot(t, shots, path)
	b.failOnProblems(t)
}

func (b *browser) screenshot(t *testing.T, dir, name string) {
	t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if r := img.Bounds(); r.Dx() < 800 || r.Dy() < 600 || blank(img) {
		t.Errorf("screenshot %s: %v, blank %v", name, r, blank(img))
	}
	file := strings.Trim(shotName.ReplaceAllString(name, "-"), "-")
	if len(file) > 120 {
		file = file[:120]
	}
	if err := os.WriteFile(filepath.Join(dir, file+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// blank reports an image of one color: nothing was drawn.
func blank(img image.Image) bool {
	r := img.Bounds()
	first := img.At(r.Min.X, r.Min.Y)
	for y := r.Min.Y; y < r.Max.Y; y += 7 {
		for x := r.Min.X; x < r.Max.X; x += 7 {
			if img.At(x, y) != first {
				return false
			}
		}
	}
	return true
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFiles(t, to, map[string]string{filepath.ToSlash(rel): string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writePGPKey writes an OpenPGP key pair (armored) and returns the paths of
// the private and the public key.
func writePGPKey(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	e, err := openpgp.NewEntity(name, "dome web view test key", name+"@dome.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	var priv, pub bytes.Buffer
	w, _ := armor.Encode(&priv, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w, _ = armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	privPath, pubPath := filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	writeFiles(t, dir, map[string]string{name + ".key": priv.String(), name + ".pub": pub.String()})
	return privPath, pubPath
}
