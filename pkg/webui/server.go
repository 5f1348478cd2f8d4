package webui

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/signing"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the web view is mounted.
const Prefix = "/ui"

// Options configure a Handler. Every source is optional: a view whose
// source is missing says so on its page.
type Options struct {
	// Registry is the tool registry the registry pages read (git objects only).
	Registry *registry.Registry
	// Actions is the signed action store; Keys the keys its versions are
	// verified against (the same set the API uses).
	Actions action.Store
	Keys    *signing.TrustedKeys
	// Keyring holds armored OpenPGP public keys: a release tag signed by one
	// of them shows as verified; without it a signature is shown as present
	// but not checked.
	Keyring []byte
	// RunsDir is the folder of runs (<repo>/ops/runs): one folder per run
	// with its ledger under events/.
	RunsDir string
	// Repo is the repository runs integrate into (their integration refs and
	// checkpoint commits); nil means the registry's repository.
	Repo *gitstore.Repo
	// CoordinatorKeys verify the signatures of promotion and gate decisions
	// (dome stack verify --trusted); nil shows them as not checked.
	CoordinatorKeys *signing.TrustedKeys
	// Poll is how often a live page's event stream looks for new ledger
	// events (default 500 ms); Heartbeat how often an idle stream sends a
	// comment so proxies keep it open (default 15 s).
	Poll      time.Duration
	Heartbeat time.Duration
	// MaxStreams bounds the live event streams served at once (default 64);
	// beyond it a stream is answered 503 and the page stays static.
	MaxStreams int
	// Logger receives errors behind 500 answers; nil discards.
	Logger *slog.Logger
}

// Handler serves the web view under Prefix.
type Handler struct {
	opts    Options
	tmpl    *template.Template
	mux     *http.ServeMux
	static  fs.FS
	log     *slog.Logger
	streams chan struct{} // a token per live stream
	bufs    sync.Pool
	cache   *lru
	runs    *runCache
	vcache  *action.VerifyCache
	done    chan struct{} // closed by Shutdown: live streams end
	stop    sync.Once
}

// Shutdown ends the live event streams (browsers reconnect to the next
// server); register it with http.Server.RegisterOnShutdown so a graceful
// stop does not wait for them.
func (h *Handler) Shutdown() { h.stop.Do(func() { close(h.done) }) }

// New returns the web view's handler.
func New(opts Options) (*Handler, error) {
	if opts.Poll <= 0 {
		opts.Poll = 500 * time.Millisecond
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = 64
	}
	h := &Handler{opts: opts, log: opts.Logger, streams: make(chan struct{}, opts.MaxStreams), cache: newLRU(256), runs: newRunCache(),
		vcache: action.NewVerifyCache(0), done: make(chan struct{})}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.bufs.New = func() any { return new(bytes.Buffer) }
	t, err := template.New("").Funcs(funcs()).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("webui: templates: %w", err)
	}
	h.tmpl = t
	st, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("webui: static: %w", err)
	}
	h.static = st

	m := http.NewServeMux()
	p := Prefix
	m.HandleFunc("GET "+p+"/{$}", h.index)
	m.HandleFunc("GET "+p+"/static/{file}", h.staticFile)
	m.HandleFunc("GET "+p+"/registry/{rev}/{$}", h.registryIndex)
	m.HandleFunc("GET "+p+"/registry/{rev}/tools/{tool}/{$}", h.toolPage)
	m.HandleFunc("GET "+p+"/registry/{rev}/tools/{tool}/profiles/{profile}/{$}", h.profilePage)
	m.HandleFunc("GET "+p+"/registry/{rev}/tools/{tool}/releases/{version}/{$}", h.releasePage)
	m.HandleFunc("GET "+p+"/registry/{rev}/tools/{tool}/diff/{base}/{$}", h.diffPage)
	m.HandleFunc("GET "+p+"/actions/{$}", h.actionsPage)
	m.HandleFunc("GET "+p+"/actions/{name}/{$}", h.actionPage)
	m.HandleFunc("GET "+p+"/actions/{name}/{version}/{$}", h.actionVersionPage)
	m.HandleFunc("GET "+p+"/runs/{$}", h.runsPage)
	m.HandleFunc("GET "+p+"/runs/{run}/{$}", h.runLatest)
	m.HandleFunc("GET "+p+"/runs/{run}/live", h.runLive)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/{$}", h.runPage)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/run.json", h.runJSON)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/plan/{$}", h.planPage)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/plan.mmd", h.planSource)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/plan.dot", h.planSource)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/graph.mmd", h.graphSource)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/graph.dot", h.graphSource)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/checkpoints/{$}", h.checkpointsPage)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/validations/{report}/{$}", h.validationPage)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/evidence/{$}", h.evidencePage)
	m.HandleFunc("GET "+p+"/runs/{run}/at/{seq}/events/{$}", h.eventsPage)
	m.HandleFunc(p+"/", h.fallback)
	h.mux = m
	return h, nil
}

// contentSecurityPolicy allows the page's own stylesheet and script and
// nothing else: no inline script or style, no frames, no forms, no plugins.
// Escaping is the first defence against hostile content; this is the second.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ServeHTTP answers a request under Prefix.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	if p := r.URL.Path; path.Clean(p) != p && path.Clean(p)+"/" != p {
		h.notFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) fallback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.errorPage(w, r, http.StatusMethodNotAllowed, "Method not allowed", "The web view is read-only: "+r.Method+" is not allowed.")
		return
	}
	// A page URL without its trailing slash: redirect (links are written with it).
	if !strings.HasSuffix(r.URL.Path, "/") && !strings.Contains(path.Base(r.URL.Path), ".") {
		if _, pat := h.mux.Handler(cloneWithPath(r, r.URL.Path+"/")); pat != "" && !strings.HasSuffix(pat, Prefix+"/") {
			http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
			return
		}
	}
	h.notFound(w, r)
}

func cloneWithPath(r *http.Request, p string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.URL.Path = p
	return r2
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.errorPage(w, r, http.StatusNotFound, "Not found", "No page at "+r.URL.Path+".")
}

func (h *Handler) staticFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	data, err := fs.ReadFile(h.static, name)
	if err != nil {
		h.notFound(w, r)
		return
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".svg":
		w.Header().Set("Content-Type", "image/svg+xml")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Write(data)
}

// page is what every template gets: the page's own data plus the chrome.
type page struct {
	Title string
	// Crumbs lead from the start page to this one.
	Crumbs []crumb
	// Live is the event stream URL of a live run page ("" on every other
	// page): only then is the script included.
	Live string
	// Permalink is the stable URL of what the page shows, when the page's
	// own URL can move (the latest state of a run).
	Permalink string
	Data      any
}

type crumb struct {
	Label string
	URL   string
}

// render executes the named template into a buffer and writes it whole, so
// a template error never leaves half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	buf := h.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer h.bufs.Put(buf)
	if err := h.tmpl.ExecuteTemplate(buf, name, p); err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelError, "render", slog.String("template", name), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
		buf.Reset()
		status = http.StatusInternalServerError
		if err := h.tmpl.ExecuteTemplate(buf, "error.html", page{Title: "Internal error", Data: errorData{Status: status, Detail: "The page could not be rendered; see the server log."}}); err != nil {
			http.Error(w, "internal error", status)
			return
		}
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	if hd.Get("Cache-Control") == "" {
		hd.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

type errorData struct {
	Status int
	Detail string
	Hint   string
}

func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	h.render(w, r, status, "error.html", page{Title: title, Crumbs: []crumb{{"dome", Prefix + "/"}}, Data: errorData{Status: status, Detail: detail}})
}

// fail answers err: an inputError as 404 (a name, a ref or a version that
// does not exist), anything else as 500 with the detail in the log only.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	var ie *inputError
	if errors.As(err, &ie) {
		h.render(w, r, ie.status(), "error.html", page{Title: ie.title(), Crumbs: []crumb{{"dome", Prefix + "/"}},
			Data: errorData{Status: ie.status(), Detail: ie.Detail, Hint: ie.Hint}})
		return
	}
	h.log.LogAttrs(r.Context(), slog.LevelError, "webui", slog.String("op", what), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	h.errorPage(w, r, http.StatusInternalServerError, "Internal error", what+" failed; see the server log.")
}

// inputError is something the URL names that is not there (404) or a
// source the server was not given (501 Not Implemented is wrong for that:
// 404 with a hint).
type inputError struct {
	Detail string
	Hint   string
	Gone   bool // 410: a release tag that no longer points where the URL says
}

func (e *inputError) Error() string { return e.Detail }
func (e *inputError) status() int {
	if e.Gone {
		return http.StatusGone
	}
	return http.StatusNotFound
}
func (e *inputError) title() string {
	if e.Gone {
		return "Gone"
	}
	return "Not found"
}

func notFoundf(hint, format string, a ...any) error {
	return &inputError{Detail: fmt.Sprintf(format, a...), Hint: hint}
}
