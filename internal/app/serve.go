package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actiongit"
	"github.com/dome-registry/dome/pkg/action/httpapi"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/webui"
	"github.com/urfave/cli/v2"
)

// EnvActionRegistryAPIKey is the publish key of dome serve.
const EnvActionRegistryAPIKey = "ACTION_REGISTRY_API_KEY"

type serveOptions struct {
	Store           string // git:PATH[#BRANCH] | postgres://... | postgres ("": the git repo of --repo)
	Addr            string
	Trusted         string // --trusted FILE; else TRUSTED_KEYS_PATH / TRUSTED_KEYS_JSON
	MaxBody         int64
	AccessLog       bool
	ShutdownTimeout time.Duration
	Revalidate      time.Duration
	Watch           bool
	UI              *webui.Handler // --ui: the web view (nil: off)
	UIRuns          string         // the runs folder it shows
}

func newServeCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve the action registry over HTTP (discover, fetch, verify, publish)",
		ArgsUsage: " ",
		Flags: append(withGlobal(
			&cli.StringFlag{Name: "store", Usage: "action store `URL`: git:PATH[#BRANCH], postgres://... or postgres ($DATABASE_URL) (default: the git repository of --repo)", EnvVars: []string{"DOME_ACTION_STORE"}},
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "listen on `HOST:PORT` (port 0: any free port, logged)", EnvVars: []string{"DOME_SERVE_ADDR"}},
			trustedFlag(),
			&cli.Int64Flag{Name: "max-body", Value: action.MaxDocumentSize, Usage: "largest publish body in `BYTES` (413 above)"},
			&cli.BoolFlag{Name: "access-log", Value: true, Usage: "log every request (JSON on stderr); --access-log=false to stop"},
			&cli.DurationFlag{Name: "shutdown-timeout", Value: 10 * time.Second, Usage: "how long a graceful stop waits for requests in flight"},
			&cli.BoolFlag{Name: "watch", Value: true, Usage: "answer reads from memory while the store reports every change (PostgreSQL: LISTEN/NOTIFY; git: inotify on the branch ref); --watch=false reads the store on every request"},
			&cli.DurationFlag{Name: "revalidate", Value: 0, Usage: "answer a version read from the store less than `D` ago from memory (0: read the store on every request; a tamper shows within D)"},
		), serveUIFlags()...),
		Action: func(c *cli.Context) error {
			opts := serveOptions{
				Store: c.String("store"), Addr: c.String("addr"), Trusted: c.String("trusted"),
				MaxBody: c.Int64("max-body"), AccessLog: c.Bool("access-log"), ShutdownTimeout: c.Duration("shutdown-timeout"),
				Revalidate: c.Duration("revalidate"), Watch: c.Bool("watch"),
			}
			if opts.MaxBody <= 0 {
				return usagef("--max-body must be positive")
			}
			if opts.Revalidate < 0 {
				return usagef("--revalidate must not be negative")
			}
			if err := httpapi.CheckAPIKey(env.Getenv(EnvActionRegistryAPIKey)); err != nil {
				return &errkind.InputError{Source: "$" + EnvActionRegistryAPIKey, Problem: err.Error(),
					Hint: "set it to a long random string (openssl rand -hex 32), or unset it to turn publishing off"}
			}
			keys, keysSource, err := loadTrustedKeys(env, opts.Trusted)
			if err != nil {
				return err
			}
			store, desc, err := openServeStore(c.Context, env, c, opts.Store)
			if err != nil {
				return err
			}
			defer store.Close()
			ui, runs, err := openServeUI(c.Context, env, c, serveUIOptionsFrom(c), store, keys)
			if err != nil {
				return err
			}
			opts.UI, opts.UIRuns = ui, runs
			return runServe(c.Context, env, store, desc, keys, keysSource, opts)
		},
		Subcommands: []*cli.Command{newServeProbeCommand(env)},
		Description: help("serve"),
	}
}

// runServe serves until ctx ends or SIGINT/SIGTERM arrives, then shuts down
// gracefully.
func runServe(ctx context.Context, env *Env, store action.Store, storeDesc string, keys *signing.TrustedKeys, keysSource string, opts serveOptions) error {
	logs := newLogBuffer(env.Stderr)
	defer logs.Close()
	logger := slog.New(slog.NewJSONHandler(logs, nil))

	apiKey := env.Getenv(EnvActionRegistryAPIKey)
	h, err := httpapi.New(httpapi.Options{
		Store: store, Keys: keys, Cache: action.NewVerifyCache(0), APIKey: apiKey,
		MaxBodyBytes: opts.MaxBody, Logger: logger, AccessLog: opts.AccessLog, Revalidate: opts.Revalidate,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return &errkind.InputError{Source: "--addr " + opts.Addr, Problem: err.Error(), Hint: "pick a free HOST:PORT (port 0 picks one)"}
	}
	const maxHeaderBytes = 64 << 10
	var handler http.Handler = h
	if opts.UI != nil {
		opts.UI.SetLogger(logger)
		handler = withUI(h, opts.UI, logger, opts.AccessLog)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		// "OPTIONS *" goes to the handler, which answers in the error
		// shape, instead of net/http's empty 200.
		DisableGeneralOptionsHandler: true,
	}
	// net/http's own answers to requests it cannot read (431, 400, 505, 501,
	// 417) come in the error shape too, and go into the access log.
	onProtocolError := func(status int, code, msg, remote string) {
		if opts.AccessLog {
			logger.LogAttrs(ctx, slog.LevelInfo, "request", slog.Int("status", status), slog.String("code", code), slog.String("remote", remote), slog.String("problem", msg))
		}
	}
	wrapped := httpapi.Listener(ln, maxHeaderBytes, onProtocolError)
	publish := "disabled (no " + EnvActionRegistryAPIKey + ")"
	if apiKey != "" {
		publish = "enabled"
		if len(apiKey) < 16 {
			logger.Warn("weak api key", "hint", EnvActionRegistryAPIKey+" is shorter than 16 characters: use a long random string")
		}
	}
	attrs := []any{"addr", ln.Addr().String(), "url", "http://" + ln.Addr().String(), "store", storeDesc,
		"trusted_keys", keysSource, "kids", keys.KIDs(), "publish", publish, "revalidate", opts.Revalidate.String(), "version", domeVersion()}
	if opts.UI != nil {
		srv.RegisterOnShutdown(opts.UI.Shutdown)
		attrs = append(attrs, "ui", "http://"+ln.Addr().String()+webui.Prefix+"/", "runs", opts.UIRuns)
	}
	logger.Info("listening", attrs...)
	logs.Flush()
	go warnStaleLock(ctx, logger, store)
	if _, ok := store.(httpapi.Watcher); ok && opts.Watch {
		wctx, wcancel := context.WithCancel(context.WithoutCancel(ctx))
		watched := make(chan struct{})
		go func() { h.Watch(wctx); close(watched) }()
		defer func() { wcancel(); <-watched }()
	}

	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(wrapped) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-sigCtx.Done():
	}
	stop() // a second signal kills at once
	logger.Info("shutting down", "timeout", opts.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		logger.Warn("shutdown incomplete", "error", err.Error())
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	}
	logger.Info("stopped")
	return nil
}

// warnStaleLock logs a warning when the git store's branch is locked and
// stays locked: a publisher killed inside a ref update leaves the lock file
// behind (as git does), and every publish fails until someone removes it. A
// live publisher holds the lock for milliseconds, so the file is checked
// twice, a second apart.
func warnStaleLock(ctx context.Context, logger *slog.Logger, store action.Store) {
	gs, ok := store.(*actiongit.Store)
	if !ok {
		return
	}
	lock := filepath.Join(gs.Repo().GitDir(), filepath.FromSlash(gs.Branch())+".lock")
	first, err := os.Stat(lock)
	if err != nil {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Second):
	}
	again, err := os.Stat(lock)
	if err != nil || !again.ModTime().Equal(first.ModTime()) || !os.SameFile(first, again) {
		return
	}
	logger.Warn("stale lock", "lock", lock, "since", again.ModTime().UTC().Format(time.RFC3339),
		"problem", "a publisher stopped inside a ref update (crash or kill -9); every publish fails until the lock is removed",
		"hint", "make sure no other process publishes to this repository, then remove "+lock)
}

// logBuffer batches log records in memory and writes them out when the
// buffer fills and every 200 ms, so a busy server does not make a write
// system call per request. Writes are whole records (slog writes one line
// per call); Close flushes.
type logBuffer struct {
	mu   sync.Mutex
	w    *bufio.Writer
	done chan struct{}
	wg   sync.WaitGroup
}

func newLogBuffer(w io.Writer) *logBuffer {
	b := &logBuffer{w: bufio.NewWriterSize(w, 64<<10), done: make(chan struct{})}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.Flush()
			case <-b.done:
				return
			}
		}
	}()
	return b
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Flush writes out what is buffered.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.w.Flush()
}

// Close stops the flusher and flushes.
func (b *logBuffer) Close() {
	close(b.done)
	b.wg.Wait()
	b.Flush()
}
