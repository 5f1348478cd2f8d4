package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/signing"
)

// Options configure a Handler.
type Options struct {
	Store action.Store         // required
	Keys  *signing.TrustedKeys // required: the keys reads verify against and publishes must be signed with
	// Cache holds verification results; nil makes one of
	// action.DefaultVerifyCacheSize entries.
	Cache *action.VerifyCache
	// APIKey is the X-API-Key a publish must carry
	// (ACTION_REGISTRY_API_KEY); "" disables publishing (405
	// PUBLISH_DISABLED).
	APIKey string
	// MaxBodyBytes bounds a publish body (413 above it); <= 0 means
	// action.MaxDocumentSize (1 MiB).
	MaxBodyBytes int64
	// Logger receives one "request" record per request when AccessLog is
	// set, and the store errors behind 500 answers; nil discards.
	Logger    *slog.Logger
	AccessLog bool
	// ReadyTimeout bounds the store check of /readyz; <= 0 means 2 s.
	ReadyTimeout time.Duration
	// RenderCacheSize bounds the cache of rendered responses; <= 0 means
	// action.DefaultVerifyCacheSize entries.
	RenderCacheSize int
	// Revalidate lets a version read from the store be answered from memory
	// for this long before the store is read again; 0 reads the store on
	// every request, so a changed byte shows at once. Published versions
	// never change, so memory answers are the published, verified bytes; a
	// tamper in the store shows within Revalidate. Unknown versions and
	// listings always go to the store.
	Revalidate time.Duration
}

// Handler serves the action registry API.
type Handler struct {
	store        action.Store
	keys         *signing.TrustedKeys
	vcache       *action.VerifyCache
	apiKey       *[sha256.Size]byte // nil: publishing disabled
	maxBody      int64
	log          *slog.Logger
	accessLog    bool
	readyTimeout time.Duration
	revalidate   time.Duration
	renders      *renderCache
	mux          *http.ServeMux

	// While watching (Watch, a store that reports changes), answers made at
	// generation gen are reused until any change bumps it.
	watching atomic.Bool
	gen      atomic.Uint64
	listed   atomic.Pointer[listEntry]
}

// listEntry is a rendered listing and the generation it was read at.
type listEntry struct {
	gen  uint64
	body []byte
}

// Watcher is a store that reports changes to stored versions as they are
// committed, by any process or person (the PostgreSQL store: LISTEN/NOTIFY).
// Watch calls ready(true) once it reports changes and ready(false) when it
// may have missed some, and changed(what) after each change; it returns when
// ctx ends.
type Watcher interface {
	Watch(ctx context.Context, ready func(bool), changed func(what string)) error
}

// Watch makes the handler answer reads from memory while the store reports
// changes: every answer is reused until the store reports any change (a
// publish, an UPDATE by hand), then read again, so a tamper shows as soon as
// the notification arrives (milliseconds), and while the feed is down every
// read goes to the store. Run it on its own goroutine; it returns when ctx
// ends, at once (nil) for a store that is not a Watcher.
func (h *Handler) Watch(ctx context.Context) error {
	w, ok := h.store.(Watcher)
	if !ok {
		return nil
	}
	return w.Watch(ctx, func(ready bool) {
		if ready {
			h.gen.Add(1) // nothing read before is trusted
			h.watching.Store(true)
			h.log.LogAttrs(ctx, slog.LevelInfo, "watching store changes", slog.String("effect", "reads are answered from memory until the store reports a change"))
			return
		}
		h.watching.Store(false)
		h.gen.Add(1)
		if ctx.Err() == nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "store change feed lost", slog.String("effect", "every read goes to the store until the feed is back"))
		}
	}, func(string) { h.gen.Add(1) })
}

// Watching reports whether reads are answered from memory (Watch).
func (h *Handler) Watching() bool { return h.watching.Load() }

// New returns the API handler.
func New(opts Options) (*Handler, error) {
	if opts.Store == nil {
		return nil, errors.New("httpapi: no store")
	}
	if opts.Keys == nil {
		return nil, errors.New("httpapi: no trusted keys")
	}
	h := &Handler{
		store:        opts.Store,
		keys:         opts.Keys,
		vcache:       opts.Cache,
		maxBody:      opts.MaxBodyBytes,
		log:          opts.Logger,
		accessLog:    opts.AccessLog && opts.Logger != nil,
		readyTimeout: opts.ReadyTimeout,
		revalidate:   opts.Revalidate,
		renders:      newRenderCache(opts.RenderCacheSize),
	}
	if h.vcache == nil {
		h.vcache = action.NewVerifyCache(0)
	}
	if h.maxBody <= 0 {
		h.maxBody = action.MaxDocumentSize
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.readyTimeout <= 0 {
		h.readyTimeout = 2 * time.Second
	}
	if err := CheckAPIKey(opts.APIKey); err != nil {
		return nil, fmt.Errorf("httpapi: API key: %w", err)
	}
	if opts.APIKey != "" {
		d := sha256.Sum256([]byte(opts.APIKey))
		h.apiKey = &d
	}
	m := http.NewServeMux()
	m.HandleFunc("GET /actions", h.list)
	m.HandleFunc("GET /actions/{name}/versions/{version}", h.get)
	m.HandleFunc("POST /actions/{name}/versions/{version}", h.publish)
	m.HandleFunc("GET /actions/{name}/versions/{version}/verify", h.verify)
	m.HandleFunc("GET /healthz", h.healthz)
	m.HandleFunc("GET /readyz", h.readyz)
	m.HandleFunc("/actions", notAllowed("GET, HEAD"))
	m.HandleFunc("/actions/{name}/versions/{version}", notAllowed("GET, HEAD, POST"))
	m.HandleFunc("/actions/{name}/versions/{version}/verify", notAllowed("GET, HEAD"))
	m.HandleFunc("/healthz", notAllowed("GET, HEAD"))
	m.HandleFunc("/readyz", notAllowed("GET, HEAD"))
	m.HandleFunc("/", notFound)
	h.mux = m
	return h, nil
}

// CheckAPIKey refuses an API key no request can carry: HTTP drops the
// spaces and tabs around a header value and cannot carry control
// characters, so a key of only whitespace, one with whitespace at either
// end or one with a control character would never match. "" (publishing
// off) is fine.
func CheckAPIKey(key string) error {
	switch {
	case key == "":
		return nil
	case strings.TrimSpace(key) == "":
		return errors.New("the key is only whitespace, which no X-API-Key header can carry")
	case strings.TrimLeft(key, " \t") != key || strings.TrimRight(key, " \t") != key:
		return errors.New("the key starts or ends with whitespace, which HTTP drops from the X-API-Key header, so it would never match")
	}
	for i, r := range key {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("the key has a control character (%U) at byte %d, which an X-API-Key header cannot carry", r, i)
		}
	}
	return nil
}

// PublishEnabled reports whether an API key is configured.
func (h *Handler) PublishEnabled() bool { return h.apiKey != nil }

// ServeHTTP routes r, recovers from panics with a 500 INTERNAL and writes the
// access log record.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	lw := getLogWriter(w)
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				putLogWriter(lw)
				panic(p)
			}
			h.log.LogAttrs(r.Context(), slog.LevelError, "panic", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("panic", fmt.Sprint(p)))
			if !lw.wrote {
				writeError(lw, CodeInternal, "internal error; see the server log", nil)
			}
		}
		if h.accessLog {
			attrs := [8]slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", lw.status),
				slog.Int64("bytes", lw.bytes),
				slog.Int64("dur_us", time.Since(start).Microseconds()),
				slog.String("remote", r.RemoteAddr),
			}
			n := 6
			if lw.code != "" {
				attrs[n] = slog.String("code", lw.code)
				n++
			}
			h.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs[:n]...)
		}
		putLogWriter(lw)
	}()
	if r.RequestURI == "*" {
		// "OPTIONS *" (asterisk-form) asks about the server, not a
		// resource; ServeMux would answer a bare 400.
		writeError(lw, CodeBadRequest, fmt.Sprintf("%s *: the asterisk request target is not supported; name an endpoint", r.Method), nil)
		return
	}
	if p := r.URL.Path; p != "/" && path.Clean(p) != p {
		// ServeMux would answer a redirect to the cleaned path (a body that
		// is not JSON); no endpoint has such a path.
		notFound(lw, r)
		return
	}
	h.mux.ServeHTTP(lw, r)
}

// --- reads

type summaryBody struct {
	Name          string            `json:"name"`
	LatestVersion string            `json:"latest_version"`
	Versions      []string          `json:"versions"`
	Description   string            `json:"description,omitempty"`
	Deprecated    map[string]string `json:"deprecated,omitempty"` // version -> reason
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	var gen uint64
	if h.watching.Load() {
		gen = h.gen.Load()
		if e := h.listed.Load(); e != nil && e.gen == gen {
			writeJSON(w, http.StatusOK, e.body)
			return
		}
	}
	sums, err := h.store.List(r.Context())
	if err != nil {
		h.internal(w, r, "list", err)
		return
	}
	items := make([]summaryBody, 0, len(sums))
	for _, s := range sums {
		vs := s.Versions
		if vs == nil {
			vs = []string{}
		}
		items = append(items, summaryBody{Name: s.Name, LatestVersion: s.LatestVersion, Versions: vs, Description: s.Description, Deprecated: s.Deprecated})
	}
	b, err := json.Marshal(struct {
		Items []summaryBody `json:"items"`
	}{items})
	if err != nil {
		h.internal(w, r, "encode the list", err)
		return
	}
	b = append(b, '\n')
	if gen != 0 {
		h.listed.Store(&listEntry{gen: gen, body: b})
	}
	writeJSON(w, http.StatusOK, b)
}

// lookup checks the path's name and version and returns the rendered
// answers of the stored version; it has answered when ok is false. The store
// is read on every call, except while watching (Watch: an answer is reused
// until the store reports a change) or with Revalidate (a version read less
// than Revalidate ago is answered from memory; published versions never
// change, and a changed byte in the store shows within Revalidate).
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request) (*rendered, bool) {
	name, version, ok := pathRef(w, r)
	if !ok {
		return nil, false
	}
	var now int64
	var gen uint64
	switch {
	case h.watching.Load():
		gen = h.gen.Load() // before the read: a change after it bumps gen
		if out := h.renders.atGen(name, version, gen); out != nil {
			return out, true
		}
	case h.revalidate > 0:
		now = time.Now().UnixNano()
		if out := h.renders.fresh(name, version, now, int64(h.revalidate)); out != nil {
			return out, true
		}
	}
	rec, err := h.store.Get(r.Context(), name, version)
	switch {
	case err == nil:
		out := h.rendered(rec)
		if gen != 0 {
			out.gen.Store(gen)
		} else if now != 0 {
			out.fetched.Store(now)
		}
		return out, true
	case errors.Is(err, action.ErrActionNotFound):
		writeError(w, CodeActionNotFound, fmt.Sprintf("no action %q", name), map[string]any{"name": name})
	case errors.Is(err, action.ErrVersionNotFound):
		writeError(w, CodeVersionNotFound, fmt.Sprintf("action %q has no version %q", name, version), map[string]any{"name": name, "version": version})
	case errors.Is(err, action.ErrInvalid):
		writeError(w, CodeInvalidAction, err.Error(), nil)
	default:
		h.internal(w, r, "get "+name+"@"+version, err)
	}
	return nil, false
}

// pathRef returns the path's name and version, answering 400
// INVALID_ACTION when either is not valid.
func pathRef(w http.ResponseWriter, r *http.Request) (string, string, bool) {
	name, version := r.PathValue("name"), r.PathValue("version")
	if err := action.CheckName(name); err != nil {
		writeError(w, CodeInvalidAction, strings.TrimPrefix(err.Error(), action.ErrInvalid.Error()+": "), map[string]any{"name": name})
		return "", "", false
	}
	if err := action.CheckVersion(version); err != nil {
		writeError(w, CodeInvalidAction, strings.TrimPrefix(err.Error(), action.ErrInvalid.Error()+": "), map[string]any{"version": version})
		return "", "", false
	}
	return name, version, true
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	out, ok := h.lookup(w, r)
	if !ok {
		return
	}
	writeBody(w, http.StatusOK, out.version, out.versionLen)
}

func (h *Handler) verify(w http.ResponseWriter, r *http.Request) {
	out, ok := h.lookup(w, r)
	if !ok {
		return
	}
	writeBody(w, http.StatusOK, out.verification, out.verifyLen)
}

func (h *Handler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`+"\n"))
}

func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.readyTimeout)
	defer cancel()
	if err := h.store.Ready(ctx); err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelWarn, "not ready", slog.String("error", err.Error()))
		writeError(w, CodeNotReady, "the store is not ready: "+err.Error(), nil)
		return
	}
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`+"\n"))
}

// --- publish

func (h *Handler) publish(w http.ResponseWriter, r *http.Request) {
	if h.apiKey == nil {
		w.Header()["Allow"] = []string{"GET, HEAD"}
		writeError(w, CodePublishDisabled, "publishing is disabled on this server: it has no ACTION_REGISTRY_API_KEY", nil)
		return
	}
	if !h.authorized(r) {
		writeError(w, CodeUnauthorized, "publishing needs the server's API key in the X-API-Key header", nil)
		return
	}
	if problem := checkMediaType(r.Header.Values("Content-Type")); problem != "" {
		writeError(w, CodeUnsupportedMediaType, problem, nil)
		return
	}
	name, version, ok := pathRef(w, r)
	if !ok {
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	// The body is the signed document, or the envelope {"schema", "signature"}.
	d, err := action.ParseSubmitted(body)
	if err != nil {
		var se *canonical.SyntaxError
		msg := strings.TrimPrefix(err.Error(), action.ErrInvalid.Error()+": ")
		if errors.As(err, &se) || strings.Contains(err.Error(), "must be a JSON object") {
			writeError(w, CodeInvalidJSON, msg, nil)
		} else {
			writeError(w, CodeInvalidAction, msg, nil)
		}
		return
	}
	if d.Name != name || d.Version != version {
		writeError(w, CodeInvalidAction, fmt.Sprintf("the document is %s@%s, the path names %s@%s", d.Name, d.Version, name, version),
			map[string]any{"document": d.Name + "@" + d.Version, "path": name + "@" + version})
		return
	}
	res, v, err := action.PublishDocument(r.Context(), h.store, d, h.keys)
	switch {
	case err == nil:
		if res.Created {
			// Read your writes: the store's change notification arrives
			// asynchronously, so answers cached before this publish must not
			// outlive it in this process.
			h.gen.Add(1)
		}
	case !v.Verified && v.Err != nil:
		det := map[string]any{"hash": v.Hash}
		if v.KID != "" {
			det["kid"] = v.KID
		}
		writeError(w, v.Code(), v.Reason, det)
		return
	case errors.Is(err, action.ErrImmutableConflict):
		det := map[string]any{"name": name, "version": version, "hash": d.Hash}
		if stored, gerr := h.store.Get(r.Context(), name, version); gerr == nil {
			det["stored_hash"] = stored.Hash
		}
		writeError(w, CodeImmutableConflict, fmt.Sprintf("%s@%s is already published with other content; versions are immutable: publish a new version", name, version), det)
		return
	case errors.Is(err, action.ErrInvalid):
		writeError(w, CodeInvalidAction, strings.TrimPrefix(err.Error(), action.ErrInvalid.Error()+": "), nil)
		return
	default:
		h.internal(w, r, "publish "+name+"@"+version, err)
		return
	}
	status := http.StatusOK
	if res.Created {
		// Read your own writes: answers cached while watching predate this
		// version, and the store's notification of it may still be on its way.
		h.gen.Add(1)
		status = http.StatusCreated
		w.Header()["Location"] = []string{"/actions/" + name + "/versions/" + version}
	}
	out := h.rendered(res.Record)
	writeBody(w, status, out.version, out.versionLen)
}

// checkMediaType says what is wrong with a publish's Content-Type, or "": it
// must be given once and be application/json (any letter case), with at most
// a charset parameter of utf-8. JSON has no other media type here:
// application/json-patch+json and the like are other formats, so a "+json"
// suffix is refused as well, and so is a body sent without a type.
func checkMediaType(values []string) string {
	const want = "send the body with Content-Type: application/json"
	switch len(values) {
	case 0:
		return "no Content-Type: " + want
	case 1:
	default:
		return "more than one Content-Type: " + want
	}
	mt, params, err := mime.ParseMediaType(values[0])
	if err != nil {
		return fmt.Sprintf("Content-Type %q is not a media type: %s", values[0], want)
	}
	if mt != "application/json" {
		return fmt.Sprintf("the body must be application/json, not %q", mt)
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return fmt.Sprintf("Content-Type parameter %s=%q is not supported: JSON is UTF-8 (charset=utf-8 is the only parameter accepted)", k, v)
		}
	}
	return ""
}

// authorized compares the X-API-Key header with the configured key as
// SHA-256 digests in constant time (subtle.ConstantTimeCompare returns at
// once on a length difference; digests have one length).
func (h *Handler) authorized(r *http.Request) bool {
	got := r.Header.Get("X-API-Key")
	if got == "" {
		return false
	}
	d := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(d[:], h.apiKey[:]) == 1
}

// readBody reads at most maxBody bytes, answering 413 beyond.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	tooLarge := func() {
		writeError(w, CodePayloadTooLarge, fmt.Sprintf("the body is over the limit of %d bytes", h.maxBody), map[string]any{"limit": h.maxBody})
	}
	if r.ContentLength > h.maxBody {
		tooLarge()
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			tooLarge()
		} else {
			writeError(w, CodeInvalidJSON, "cannot read the body: "+err.Error(), nil)
		}
		return nil, false
	}
	return body, true
}

func (h *Handler) internal(w http.ResponseWriter, r *http.Request, op string, err error) {
	h.log.LogAttrs(r.Context(), slog.LevelError, "store error", slog.String("op", op), slog.String("error", err.Error()))
	writeError(w, CodeInternal, op+": the store failed; see the server log", nil)
}

func notAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Allow"] = []string{allow}
		writeError(w, CodeMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow), nil)
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, CodeNotFound, fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path), nil)
}
