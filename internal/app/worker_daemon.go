package app

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/jobwire"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/workerd"
	"github.com/urfave/cli/v2"
)

// workerDaemonFlags are the flags of dome worker run as a daemon.
func workerDaemonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "nats", Usage: "the NATS server holding the run's JetStream work queue (`URL`: nats://HOST:PORT; nats://USER:PASSWORD@HOST:PORT)"},
		&cli.StringFlag{Name: "gateway", Usage: "the coordinator's gateway (`URL`: https://HOST:PORT)"},
		&cli.StringFlag{Name: "gateway-ca", Usage: "the CA certificate `FILE` (PEM) the gateway's TLS certificate must chain to"},
		&cli.BoolFlag{Name: "insecure-loopback", Usage: "reach a gateway on a loopback address over plain http (tests, one machine)"},
		&cli.StringFlag{Name: "trust", Usage: "only run jobs signed by the coordinator keys in `FILE` (a trusted-keys file, or one public key PEM; default: the keys the gateway names over TLS)"},
		&cli.StringFlag{Name: "run", Usage: "serve only the run `ID` (default: the one the gateway serves)"},
		&cli.StringFlag{Name: "id", Usage: "this daemon's `ID` in the ledger (default: host name and process id)"},
		&cli.IntFlag{Name: "slots", Value: 1, Usage: "run at most `N` attempts at once"},
		&cli.StringFlag{Name: "sandbox", Value: "bwrap", Usage: "how workers are confined: bwrap, or none (`MODE`)"},
		&cli.StringFlag{Name: "tools", Usage: "a `DIR` of worker tools bound read-only at /run/dome/tools (what the queue's commands call)"},
	}
}

// runWorkerDaemon is dome worker --nats URL --gateway URL: it pulls and
// runs jobs until it is interrupted.
func runWorkerDaemon(c *cli.Context, env *Env) error {
	if c.NArg() > 0 {
		return usagef("the worker daemon takes no arguments: run it as dome worker --nats URL --gateway URL (or dome worker submit inside a sandbox)")
	}
	natsURL, gw := c.String("nats"), c.String("gateway")
	if natsURL == "" || gw == "" {
		return usagef("the worker daemon needs --nats URL and --gateway URL (inside a sandbox: dome worker submit)")
	}
	if !strings.HasPrefix(natsURL, "nats://") && !strings.HasPrefix(natsURL, "tls://") {
		return &errkind.InputError{Source: "--nats", Field: natsURL, Problem: "want nats://HOST:PORT or tls://HOST:PORT"}
	}
	cfg := workerd.Config{NATS: natsURL, Gateway: gw, Insecure: c.Bool("insecure-loopback"), RunID: c.String("run"), Slots: c.Int("slots"),
		DaemonID: c.String("id"), Now: env.Now,
		Log: func(format string, a ...any) { fmt.Fprintf(env.Stderr, "dome worker: "+format+"\n", a...) }}
	if cfg.DaemonID == "" {
		host, _ := os.Hostname()
		cfg.DaemonID = workerd.DefaultID(host, os.Getpid())
	}
	if ca := c.String("gateway-ca"); ca != "" {
		tc, err := clientTLS(absPath(env, ca))
		if err != nil {
			return err
		}
		cfg.TLS = tc
	} else if strings.HasPrefix(gw, "https://") {
		return &errkind.InputError{Source: "--gateway-ca", Problem: "no CA for the gateway's TLS certificate", Hint: "give the CA certificate (PEM) that signed the gateway's certificate: --gateway-ca FILE"}
	}
	if f := c.String("trust"); f != "" {
		keys, err := readTrust(absPath(env, f))
		if err != nil {
			return err
		}
		cfg.Trusted = keys
	}
	sb, kind, err := workerSandbox(c)
	if err != nil {
		return err
	}
	cfg.Sandbox = sb
	tmp, err := os.MkdirTemp(scratchRoot(), "dome-worker-")
	if err != nil {
		return err
	}
	defer sandbox.RemoveAll(tmp)
	os.Chmod(tmp, 0o755)
	cfg.ScratchParent = tmp
	dome := ""
	if exe, err := os.Executable(); err == nil {
		dome = exe
		if !sb.Unconfined() {
			if dome, err = orchestrate.CopyBinary(exe, filepath.Join(tmp, "dome")); err != nil {
				return fmt.Errorf("the dome binary for the workers: %w", err)
			}
		}
	}
	tools := c.String("tools")
	if tools != "" {
		tools = absPath(env, tools)
	}
	if cfg.Binds, err = orchestrate.DomeBinds(dome, tools, sb.Unconfined(), tmp); err != nil {
		return &errkind.InputError{Source: "--tools", Problem: err.Error()}
	}
	for _, b := range cfg.Binds {
		if err := sb.CheckBind(b.Src); err != nil {
			return &errkind.InputError{Source: "--tools", Problem: err.Error(), Hint: "the sandbox's user must read the workers' tools: keep them in a folder others may enter"}
		}
	}
	cfg.Ready = func(info jobwire.Info) {
		fmt.Fprintf(env.Stderr, "dome worker: %s serving run %s from %s (consumer %s, sandbox %s, %d slot(s))\n", cfg.DaemonID, info.RunID, orchestrate.NameOf(natsURL),
			info.Consumer, kind, cfg.Slots)
	}
	d, err := workerd.New(cfg)
	if err != nil {
		return &errkind.InputError{Source: "dome worker", Problem: err.Error()}
	}
	ctx, stop := interruptible(c.Context)
	defer stop()
	if err := d.Run(ctx); err != nil && !errors.Is(err, ctx.Err()) {
		return err
	}
	return nil
}

func workerSandbox(c *cli.Context) (*sandbox.Sandbox, string, error) {
	switch mode := c.String("sandbox"); mode {
	case "bwrap", "bubblewrap":
		sb, err := sandbox.New(c.Context, sandbox.Options{})
		if err != nil {
			var ue *sandbox.UnavailableError
			if errors.As(err, &ue) {
				return nil, "", &errkind.InputError{Source: "sandbox", Problem: ue.Error(), Hint: ue.Hint}
			}
			return nil, "", err
		}
		return sb, "bubblewrap", nil
	case "none":
		sb, err := sandbox.NewUnconfined(sandbox.Options{})
		return sb, "none", err
	default:
		return nil, "", &errkind.InputError{Source: "--sandbox", Field: mode, Problem: "want bwrap or none"}
	}
}

func scratchRoot() string {
	if os.Geteuid() == 0 {
		return "/tmp" // reachable by the sandbox user
	}
	return os.TempDir()
}

// clientTLS is a TLS client configuration trusting the CA certificates in
// the PEM file ca.
func clientTLS(ca string) (*tls.Config, error) {
	b, err := readlimit.ReadFile(ca, readlimit.Profile)
	if err != nil {
		return nil, &errkind.InputError{Source: ca, Problem: "cannot read the CA certificate: " + pathErr(err)}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, &errkind.InputError{Source: ca, Problem: "no PEM certificate in it", Hint: "give the CA certificate that signed the gateway's certificate (-----BEGIN CERTIFICATE-----)"}
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// serverTLS is the gateway's TLS from a certificate chain and its key.
func serverTLS(cert, key string) (*tls.Config, error) {
	c, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, &errkind.InputError{Source: "--gateway-cert", Problem: fmt.Sprintf("%s and %s: %v", cert, key, err),
			Hint: "give the gateway's certificate (PEM, the chain to its CA) and its private key"}
	}
	return &tls.Config{Certificates: []tls.Certificate{c}, MinVersion: tls.VersionTLS12}, nil
}

// readTrust reads coordinator keys from a trusted-keys file.
func readTrust(p string) (*signing.TrustedKeys, error) {
	b, err := readlimit.ReadFile(p, readlimit.Profile)
	if err != nil {
		return nil, &errkind.InputError{Source: "--trust", Problem: "cannot read the keys: " + pathErr(err)}
	}
	keys, err := signing.ParseTrustedKeys(b)
	if err != nil {
		return nil, &errkind.InputError{Source: p, Problem: err.Error(), Hint: "give a trusted-keys file naming the coordinator's key (its kid and public key)"}
	}
	return keys, nil
}
