// Package workerd is the worker daemon of a wave run spread over machines
// (dome worker --nats URL --gateway URL): it pulls job messages from the
// run's NATS JetStream consumer, checks each (pkg/jobwire: the
// coordinator's signature, the SpawnSpec, the grant and its binding, the
// expiry, a repeat), claims the attempt at the coordinator's gateway over
// TCP (TLS with the CA the user gives; the attempt's grant and dispatch
// token prove every call), fetches its scratch tree (only the files its
// grant may read), runs the worker in its own sandbox (pkg/sandbox) with
// the gateway reached through a Unix socket the daemon proxies, posts the
// result and acknowledges the message only once the coordinator answered
// that it is recorded. A message it refuses is terminated and published on
// the run's dead-letter subject with its reason code, where the
// coordinator records it. The daemon holds no state that matters: kill it
// and the job is redelivered once its grant is spent.
//
// It prints nothing: what happens goes to Config.Log.
package workerd

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/jobwire"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/signing"
)

// Config is what a daemon needs.
type Config struct {
	NATS        string        // nats://host:port
	NATSOptions []nats.Option // credentials, TLS
	Gateway     string        // https://host:port (http:// only on loopback with Insecure)
	TLS         *tls.Config   // the client TLS (RootCAs: the CA the user configured)
	Insecure    bool
	// Trusted pins the coordinator keys whose jobs run (nil: the keys
	// the gateway names, trusted through TLS).
	Trusted  *signing.TrustedKeys
	RunID    string // the run to serve ("": the gateway's)
	DaemonID string
	Slots    int // attempts at once (default 1)
	Sandbox  *sandbox.Sandbox
	Binds    []sandbox.Bind // the dome binary, the tools folder
	// ScratchParent is where scratch folders go ("": the sandbox's).
	ScratchParent string
	MaxTreeFiles  int   // default 100,000
	MaxTreeBytes  int64 // default 1 GiB
	Now           func() time.Time
	Log           func(format string, a ...any)
	// Ready is told once the daemon pulls jobs.
	Ready func(info jobwire.Info)
}

// Daemon is a running worker daemon.
type Daemon struct {
	cfg  Config
	hc   *http.Client
	base *url.URL

	mu      sync.Mutex
	info    jobwire.Info
	checker *jobwire.Checker
	seen    map[string]time.Time // node execution ids claimed here
	running map[string]context.CancelFunc
	nc      *nats.Conn
	js      jetstream.JetStream
}

// New checks cfg.
func New(cfg Config) (*Daemon, error) {
	u, err := url.Parse(cfg.Gateway)
	if err != nil || u.Host == "" || u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("--gateway %q: want https://HOST:PORT", cfg.Gateway)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !cfg.Insecure || !isLoopback(u.Host) {
			return nil, fmt.Errorf("--gateway %q: plain http only on a loopback address with --insecure-loopback (tests); use https with the gateway's CA", cfg.Gateway)
		}
	default:
		return nil, fmt.Errorf("--gateway %q: want https://HOST:PORT", cfg.Gateway)
	}
	if cfg.Sandbox == nil {
		return nil, errors.New("a sandbox is required")
	}
	if grant.CheckID(cfg.DaemonID) != nil {
		return nil, fmt.Errorf("daemon id %q: use letters, digits and . _ : @ + -", cfg.DaemonID)
	}
	if cfg.Slots <= 0 {
		cfg.Slots = 1
	}
	if cfg.MaxTreeFiles <= 0 {
		cfg.MaxTreeFiles = 100000
	}
	if cfg.MaxTreeBytes <= 0 {
		cfg.MaxTreeBytes = 1 << 30
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	tr := &http.Transport{TLSClientConfig: cfg.TLS, MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext, TLSHandshakeTimeout: 5 * time.Second, ResponseHeaderTimeout: 3 * time.Minute}
	return &Daemon{cfg: cfg, hc: &http.Client{Transport: tr}, base: &url.URL{Scheme: u.Scheme, Host: u.Host},
		seen: map[string]time.Time{}, running: map[string]context.CancelFunc{}}, nil
}

// DefaultID is a daemon id from the host name and the process id.
func DefaultID(host string, pid int) string {
	var b strings.Builder
	for _, c := range host {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' {
			b.WriteRune(c)
		}
	}
	h := strings.TrimLeft(b.String(), "._-")
	if h == "" {
		h = "worker"
	}
	if len(h) > 64 {
		h = h[:64]
	}
	return fmt.Sprintf("%s-%d", h, pid)
}

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Run pulls and runs jobs until ctx ends.
func (d *Daemon) Run(ctx context.Context) error {
	if err := d.loadInfo(ctx, true); err != nil {
		return err
	}
	opts := append([]nats.Option{nats.Name("dome worker " + d.cfg.DaemonID), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(true), nats.Timeout(5 * time.Second)}, d.cfg.NATSOptions...)
	nc, err := nats.Connect(d.cfg.NATS, opts...)
	if err != nil {
		return fmt.Errorf("NATS at %s: %w", d.cfg.NATS, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.nc, d.js = nc, js
	d.mu.Unlock()
	sub, err := nc.Subscribe("dome.cancel.>", func(m *nats.Msg) {
		i := strings.LastIndexByte(m.Subject, '.')
		d.mu.Lock()
		cancel := d.running[m.Subject[i+1:]]
		d.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	})
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	ready := false
	var wg sync.WaitGroup
	for i := 0; i < d.cfg.Slots; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.slot(ctx, func(info jobwire.Info) {
				d.mu.Lock()
				first := !ready
				ready = true
				d.mu.Unlock()
				if first && d.cfg.Ready != nil {
					d.cfg.Ready(info)
				}
			})
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// loadInfo asks the gateway what it serves, until it answers (wait) or
// once.
func (d *Daemon) loadInfo(ctx context.Context, wait bool) error {
	backoff := 250 * time.Millisecond
	logged := false
	for {
		info, err := d.getInfo(ctx)
		if err == nil {
			if d.cfg.RunID != "" && info.RunID != d.cfg.RunID {
				err = fmt.Errorf("the gateway serves run %s, not %s", info.RunID, d.cfg.RunID)
			}
		}
		if err == nil {
			keys := d.cfg.Trusted
			if keys == nil {
				var pubs []signing.PublicKey
				for _, k := range info.Keys {
					p, perr := signing.ParsePublicKey(k.KID, k.PublicKey)
					if perr != nil {
						return fmt.Errorf("the gateway's coordinator key %s: %w", k.KID, perr)
					}
					pubs = append(pubs, p)
				}
				if keys, err = signing.NewTrustedKeys(pubs...); err != nil {
					return fmt.Errorf("the gateway's coordinator keys: %w", err)
				}
			}
			ch, err := jobwire.NewChecker(keys)
			if err != nil {
				return err
			}
			ch.RunID = info.RunID
			d.mu.Lock()
			changed := d.info.RunID != "" && d.info.RunID != info.RunID
			d.info, d.checker = info, ch
			d.mu.Unlock()
			if changed || logged {
				d.cfg.Log("gateway %s serves run %s", d.base.Host, info.RunID)
			}
			return nil
		}
		if !wait {
			return err
		}
		if !logged {
			d.cfg.Log("%s: gateway %s: %v (trying again)", jobwire.CodeGatewayUnreachable, d.base.Host, err)
			logged = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (d *Daemon) getInfo(ctx context.Context) (jobwire.Info, error) {
	var info jobwire.Info
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base.String()+jobwire.PathInfo, nil)
	if err != nil {
		return info, err
	}
	resp, err := d.hc.Do(req)
	if err != nil {
		return info, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return info, err
	}
	if resp.StatusCode != http.StatusOK {
		return info, fmt.Errorf("%s: %d %s", jobwire.PathInfo, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, &info); err != nil || info.RunID == "" || info.Consumer == "" {
		return info, fmt.Errorf("%s: not a dispatch info answer", jobwire.PathInfo)
	}
	return info, nil
}

// slot pulls one job at a time.
func (d *Daemon) slot(ctx context.Context, ready func(jobwire.Info)) {
	var cons jetstream.Consumer
	idle := 0
	for ctx.Err() == nil {
		d.mu.Lock()
		info, js := d.info, d.js
		d.mu.Unlock()
		if cons == nil {
			c, err := js.Consumer(ctx, info.Stream, info.Consumer)
			if err != nil {
				// The coordinator has not made it yet, or NATS is away.
				sleep(ctx, time.Second)
				if idle++; idle%10 == 0 {
					d.loadInfo(ctx, false)
				}
				continue
			}
			cons = c
			ready(info)
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			cons = nil
			sleep(ctx, 500*time.Millisecond)
			continue
		}
		got := false
		for m := range batch.Messages() {
			got = true
			d.handle(ctx, m)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			cons = nil
		}
		if got {
			idle = 0
		} else if idle++; idle%15 == 0 {
			// Idle a while: the gateway may serve another run now.
			old := info.Consumer
			if d.loadInfo(ctx, false) == nil {
				d.mu.Lock()
				if d.info.Consumer != old {
					cons = nil
				}
				d.mu.Unlock()
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
