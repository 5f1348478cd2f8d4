package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/webui"
	"github.com/urfave/cli/v2"
)

// serveUIOptions are the web view's flags.
type serveUIOptions struct {
	On      bool   // --ui
	Ops     string // --ops DIR: the runs folder (default <repo>/ops/runs)
	Keyring string // --ui-keyring FILE: OpenPGP keys release tags are checked against
	Trusted string // --ui-trusted FILE: coordinator keys promotion decisions are checked against
}

func serveUIFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "ui", Usage: "also serve the read-only web view under /ui/: the registry of --repo, the actions of --store and the runs of --ops (off by default)", EnvVars: []string{"DOME_SERVE_UI"}},
		stackOpsFlag(),
		&cli.StringFlag{Name: "ui-keyring", Usage: "with --ui: armored OpenPGP public keys in `FILE`; release tags signed by one show as verified"},
		&cli.StringFlag{Name: "ui-trusted", Usage: "with --ui: coordinator keys `FILE` (as dome stack verify --trusted); signed promotion decisions show as verified"},
	}
}

func serveUIOptionsFrom(c *cli.Context) serveUIOptions {
	return serveUIOptions{On: c.Bool("ui"), Ops: c.String("ops"), Keyring: c.String("ui-keyring"), Trusted: c.String("ui-trusted")}
}

// openServeUI builds the web view: the registry of --repo (which must be a
// local or remote repository), the action store the API serves, and the
// runs folder. Flags that only matter with --ui are refused without it.
func openServeUI(ctx context.Context, env *Env, c *cli.Context, opts serveUIOptions, store action.Store, keys *signing.TrustedKeys) (*webui.Handler, string, error) {
	if !opts.On {
		for _, f := range []string{"ops", "ui-keyring", "ui-trusted"} {
			if c.IsSet(f) {
				return nil, "", usagef("--%s is a web view option: add --ui", f)
			}
		}
		return nil, "", nil
	}
	repo, err := openRepo(ctx, env, c)
	if err != nil {
		var ie *errkind.InputError
		if errors.As(err, &ie) {
			ie.Hint = "dome serve --ui shows the registry of --repo: run it inside the registry repository or pass --repo PATH|URL"
		}
		return nil, "", err
	}
	wo := webui.Options{Registry: registry.New(repo), Actions: store, Keys: keys}
	if opts.Keyring != "" {
		data, err := readlimit.ReadFile(absPath(env, opts.Keyring), readlimit.KeySet)
		if err != nil {
			return nil, "", &errkind.InputError{Source: "--ui-keyring " + opts.Keyring, Problem: err.Error(), Hint: "give a file of armored OpenPGP public keys (gpg --export --armor KEYID)"}
		}
		wo.Keyring = data
	}
	if opts.Trusted != "" {
		data, err := readlimit.ReadFile(absPath(env, opts.Trusted), readlimit.KeySet)
		if err == nil {
			wo.CoordinatorKeys, err = signing.ParseTrustedKeys(data)
		}
		if err != nil {
			return nil, "", &errkind.InputError{Source: "--ui-trusted " + opts.Trusted, Problem: err.Error(),
				Hint: `give the coordinator's trusted keys: a JSON array of {"kid", "alg": "ed25519", "public_key": "base64:..."} (dome keygen writes one)`}
		}
	}
	runs := opts.Ops
	if runs == "" {
		if repo.RemoteURL() == "" {
			root := repo.Path()
			if main := repo.MainWorktree(); main != "" {
				root = main
			}
			runs = filepath.Join(root, filepath.FromSlash(stack.RunsDir))
		}
	} else {
		runs = absPath(env, runs)
		if fi, err := os.Stat(runs); err != nil || !fi.IsDir() {
			return nil, "", &errkind.InputError{Source: "--ops " + opts.Ops, Problem: "not a folder", Hint: "give the runs folder (<repo>/ops/runs by default)"}
		}
		// The runs integrate into the repository that holds their folder
		// (their integration refs and checkpoints are there), which need
		// not be the registry's.
		if rr, err := gitstore.Open(runs); err == nil {
			wo.Repo = rr
		}
	}
	wo.RunsDir = runs
	h, err := webui.New(wo)
	if err != nil {
		return nil, "", err
	}
	return h, runs, nil
}

// withUI routes /ui and everything under it to the web view, "/" to its
// start page, and the rest to the API; requests to the view are logged like
// the API's.
func withUI(api http.Handler, ui *webui.Handler, logger *slog.Logger, accessLog bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case p == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			http.Redirect(w, r, webui.Prefix+"/", http.StatusFound)
		case p == webui.Prefix || strings.HasPrefix(p, webui.Prefix+"/"):
			if !accessLog {
				ui.ServeHTTP(w, r)
				return
			}
			sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
			start := time.Now()
			ui.ServeHTTP(sw, r)
			logger.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("method", r.Method), slog.String("path", p),
				slog.Int("status", sw.status), slog.Int64("bytes", sw.bytes), slog.Int64("dur_us", time.Since(start).Microseconds()),
				slog.String("remote", r.RemoteAddr))
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// statusWriter records what was answered; Unwrap lets
// http.ResponseController reach the connection (flushes and write
// deadlines of the live event streams).
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
