package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/urfave/cli/v2"
)

type serveProbeOptions struct {
	URL     string
	Timeout time.Duration
}

// newServeProbeCommand is a container's health check: the dome image is
// distroless (no shell, no curl), so dome itself asks the server whether it
// is ready.
func newServeProbeCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "probe",
		Usage:     "ask a running server (dome serve) whether it is ready (a container health check); exit 0 when it is",
		ArgsUsage: " ",
		Flags: withGlobal(
			&cli.StringFlag{Name: "url", Usage: "the readiness `URL` (default: /readyz at --addr)"},
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "the `HOST:PORT` the server listens on (0.0.0.0 and :: mean this host)", EnvVars: []string{"DOME_SERVE_ADDR"}},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Second, Usage: "give up after `D`"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("serve probe takes no arguments (got %q)", c.Args().First())
			}
			u := c.String("url")
			if u == "" {
				var err error
				if u, err = readyURL(c.String("addr")); err != nil {
					return usageError{Err: err}
				}
			}
			return runServeProbe(c.Context, env, serveProbeOptions{URL: u, Timeout: c.Duration("timeout")})
		},
		Description: help("serve_probe"),
	}
}

// readyURL is http://HOST:PORT/readyz, with a wildcard listen address
// turned into loopback.
func readyURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: %v (want HOST:PORT)", addr, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::", "[::]":
		host = "::1"
	}
	return (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/readyz"}).String(), nil
}

func runServeProbe(ctx context.Context, env *Env, opts serveProbeOptions) error {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--url %q is not an http(s) URL", opts.URL)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return usageError{Err: err}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: not ready: %w", opts.URL, err)
	}
	defer resp.Body.Close()
	body, _ := readlimit.ReadAll(resp.Body, 4096)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: not ready: %s %s", opts.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(env.Stdout, "ready: %s %s\n", opts.URL, resp.Status)
	return nil
}
