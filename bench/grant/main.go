// Command grant benchmarks grants and prints "workload | dome | peer |
// peer/dome | floor | target" rows: medians with their ranges [min-max] of
// interleaved rounds, ratios in time (peer time / dome time, above 1: dome
// is faster), the load average at the start and the end:
//
//   - Stateless verification of one grant (structure, Ed25519 signature,
//     validity, bindings, a call's method and path): grant.Verifier.Check,
//     against the floor, crypto/ed25519.Verify over the same grant bytes,
//     and the peer, golang-jwt/jwt/v5 parsing and verifying an EdDSA JWT
//     with the same claims (audience and expiry checked). Also the
//     gateway's per-call cost with the verified-grant cache.
//   - Verify + spend of distinct single-use grants from 64 goroutines on the
//     file store (each spend fdatasync'ed before it is acknowledged, grouped
//     commits) and on PostgreSQL (a throwaway cluster, internal/pgtest), with
//     serial fdatasync as the durability floor.
//   - Derive against a synthetic 100-capability resolver spec (10 tools, 400
//     operations): a node needing 5 capabilities and one needing all 100.
package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/sys/unix"

	"github.com/dome-registry/dome/internal/benchrun"
	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/a2a"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/grant/grantfile"
	"github.com/dome-registry/dome/pkg/grant/grantpg"
	"github.com/dome-registry/dome/pkg/signing"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func main() {
	rounds := flag.Int("rounds", 7, "rounds per measurement (median reported)")
	spends := flag.Int("spends", 20000, "grants spent on the file store")
	pgSpends := flag.Int("pg-spends", 5000, "grants spent on PostgreSQL")
	spendRounds := flag.Int("spend-rounds", 3, "rounds of the file store's spends, each beside the fdatasync floor")
	work := flag.String("work", "bench/.work/grant", "work directory")
	flag.Parse()
	check(os.MkdirAll(*work, 0o755))
	fmt.Printf("%d CPUs, %s, load average at start: %s\n\n", runtime.NumCPU(), runtime.Version(), benchrun.Load())

	key := signing.PrivateKey{KID: "coord-1", Key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))}
	trusted, err := signing.NewTrustedKeys(key.Public())
	check(err)
	fx := newFixture(100)
	d, err := grant.Derive(fx.sources(), grant.Need{NodeID: "node-1", Capabilities: fx.caps[:2], Role: grant.RoleWorker})
	check(err)

	rows := [][]string{{"workload", "dome", "peer: golang-jwt/jwt/v5 EdDSA", "peer/dome (time)", "floor", "dome/floor (rate)", "target"}}

	// 1. Stateless verification.
	tok, g, err := grant.Issue(d, grant.Binding{RunID: "run-1", WaveID: "wave-1", WorkerID: "w-1", Issuer: "coord-1", IssuedAt: t0, JTI: "jti-bench"}, key, nil)
	check(err)
	req := grant.Request{Audience: "worker_runtime", RunID: "run-1", WaveID: "wave-1", WorkerID: "w-1", Now: t0.Add(time.Minute),
		Call: &grant.Call{Method: g.Payload.AllowedMethods[0].Method, ReadPaths: []string{"src/m0/main.go"}}}
	v, err := grant.NewVerifier(trusted, grant.Options{})
	check(err)
	if _, err := v.Check(tok, req); err != nil {
		fail("verify: " + err.Error())
	}
	rawSig := ed25519.Sign(key.Key, tok)
	jwtTok, jwtKey := jwtOf(g, key)
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithAudience("worker_runtime"), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return t0.Add(time.Minute) }))
	keyfunc := func(*jwt.Token) (any, error) { return jwtKey, nil }
	if _, err := parser.Parse(jwtTok, keyfunc); err != nil {
		fail("jwt: " + err.Error())
	}
	// Paired and interleaved: each round times the three on the same
	// moment's machine, in rotating order; medians of rates and of ratios.
	fns := []func(){
		func() {
			if _, err := v.Check(tok, req); err != nil {
				panic(err)
			}
		},
		func() {
			if !ed25519.Verify(key.Public().Key, tok, rawSig) {
				panic("floor")
			}
		},
		func() {
			if _, err := parser.Parse(jwtTok, keyfunc); err != nil {
				panic(err)
			}
		},
	}
	var dv, fv, jv, dOverF, dOverJ []float64
	for i := 0; i < *rounds*5; i++ {
		var r [3]float64
		for k := 0; k < 3; k++ {
			j := (i + k) % 3
			r[j] = opsPerSec(fns[j], 300)
		}
		dv, fv, jv = append(dv, r[0]), append(fv, r[1]), append(jv, r[2])
		dOverF, dOverJ = append(dOverF, r[0]/r[1]), append(dOverJ, r[0]/r[2])
	}
	rf, rj := median(dOverF), median(dOverJ)
	rows = append(rows, []string{fmt.Sprintf("stateless verify (grant %d B, JWT %d B)", len(tok), len(jwtTok)), rates(dv), rates(jv), fmt.Sprintf("%.2fx", rj), rates(fv) + " ed25519.Verify", fmt.Sprintf("%.2f", rf), verdict(rf >= 0.8 && rj > 1, ">= 0.8x floor, > peer")})

	cached, err := grant.NewVerifier(trusted, grant.Options{CacheSize: 1024, Meter: grant.NewMeter()})
	check(err)
	var cv []float64
	for i := 0; i < *rounds; i++ {
		cv = append(cv, perSec(func() {
			if _, err := cached.Check(tok, req); err != nil {
				panic(err)
			}
		}))
	}
	cm := median(cv)
	rows = append(rows, []string{"  per call with the verified-grant cache (gateway)", rates(cv), "-", "-", "-", "-", verdict(cm >= 20000/2, ">= 10,000/s per core (20,000/s on 2)")})

	// The gateway's whole per-call path: Authorize with the cache, the meter
	// and a file-store lookup (revoked? spent?), from 8 goroutines.
	gw := gatewayRate(key, trusted, fx, *work)
	rows = append(rows, []string{"  gateway: Authorize read_file (cache, meter, file store), 8 goroutines", rate(gw), "-", "-", "-", "-", verdict(gw >= 20000, ">= 20,000/s on 2 cores")})

	// 2. Verify + spend, durable before ack, alternating with the floor.
	var fsyncs, files []float64
	for i := 0; i < *spendRounds; i++ {
		fsyncs = append(fsyncs, fsyncRate(*work))
		files = append(files, spendRate(*spends, key, trusted, d, func() grant.Store {
			dir := filepath.Join(*work, "store")
			check(os.RemoveAll(dir))
			s, err := grantfile.Open(dir)
			check(err)
			return s
		}))
	}
	fileRate, fsyncFloor := median(files), median(fsyncs)
	rows = append(rows, []string{"verify + spend, file store, 64 goroutines", rates(files), "-", "-", rates(fsyncs) + " serial fdatasync", fmt.Sprintf("%.1f", fileRate/fsyncFloor), verdict(fileRate >= 5000, ">= 5,000/s")})
	if pgRate, why := pgSpendRate(*pgSpends, key, trusted, d); why == "" {
		rows = append(rows, []string{"verify + spend, PostgreSQL, 64 goroutines (one run)", rate(pgRate), "-", "-", "-", "-", "reported"})
	} else {
		rows = append(rows, []string{"verify + spend, PostgreSQL", "skipped: " + why, "-", "-", "-", "-", ""})
	}

	// 3. Derive against 100 capabilities.
	var ix []time.Duration
	for i := 0; i < *rounds; i++ {
		start := time.Now()
		_, err := grant.NewIndex(fx.resolver, fx.catalog)
		check(err)
		ix = append(ix, time.Since(start))
	}
	for _, n := range []int{5, 100} {
		need := grant.Need{NodeID: "node-1", Capabilities: fx.caps[:n], Role: grant.RoleWorker}
		var ds []time.Duration
		for i := 0; i < *rounds; i++ {
			ds = append(ds, time.Duration(float64(time.Second)/perSec(func() {
				if _, err := grant.Derive(fx.sources(), need); err != nil {
					panic(err)
				}
			})))
		}
		per := medianDur(ds)
		rows = append(rows, []string{fmt.Sprintf("derive, %d of 100 capabilities (%d methods)", n, n*4), durs(ds), "-", "-", "-", "-", verdict(per < time.Millisecond, "< 1 ms")})
	}
	rows = append(rows, []string{"  resolver index (once per pinned policy)", durs(ix), "-", "-", "-", "-", ""})
	printTable(rows)
	fmt.Printf("(medians of %d rounds (verification: %d paired rounds of 300 calls; spends: %d rounds), ranges in brackets; load average at the end: %s)\n",
		*rounds, *rounds*5, *spendRounds, benchrun.Load())
}

// perSec runs f as a Go benchmark and returns operations per second.
func perSec(f func()) float64 {
	r := testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f()
		}
	})
	return float64(r.N) / r.T.Seconds()
}

// opsPerSec times n calls of f.
func opsPerSec(f func(), n int) float64 {
	start := time.Now()
	for i := 0; i < n; i++ {
		f()
	}
	return float64(n) / time.Since(start).Seconds()
}

// jwtOf is the peer's token: an EdDSA JWT with the grant's claims.
func jwtOf(g *grant.Grant, key signing.PrivateKey) (string, ed25519.PublicKey) {
	p := g.Payload
	claims := jwt.MapClaims{
		"iss": p.Issuer, "aud": p.Audience, "jti": p.JTI, "iat": t0.Unix(), "nbf": t0.Unix(), "exp": t0.Add(15 * time.Minute).Unix(),
		"profile_id": p.ProfileID, "contracts": p.Contracts, "run_id": p.RunID, "wave_id": p.WaveID, "worker_id": p.WorkerID,
		"single_use": p.SingleUse, "allowed_methods": p.AllowedMethods, "allowed_capabilities": p.AllowedCapabilities,
		"constraints": p.Constraints, "budgets": p.Budgets,
	}
	// Round-trip through JSON so the claims are plain maps, as a parser sees them.
	b, _ := json.Marshal(claims)
	var plain jwt.MapClaims
	check(json.Unmarshal(b, &plain))
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, plain)
	t.Header["kid"] = key.KID
	s, err := t.SignedString(key.Key)
	check(err)
	return s, key.Public().Key
}

// gatewayRate measures Authorize calls per second on one multi-use grant.
func gatewayRate(key signing.PrivateKey, trusted *signing.TrustedKeys, fx *fixture, work string) float64 {
	var read []string
	for _, c := range fx.caps {
		if len(read) < 2 {
			read = append(read, c)
		}
	}
	d, err := grant.Derive(fx.sources(), grant.Need{Capabilities: read, Role: grant.RoleWorker})
	check(err)
	for i := range d.Profile.AllowedMethods {
		d.Profile.AllowedMethods[i].Class = grant.ClassRead // a read-only view: nothing to spend
	}
	// Budgets large enough for the run (a real gateway's grant has its own).
	d.Profile.SingleUse = false
	d.Profile.Budgets.MaxCalls = 1_000_000_000_000
	d.Profile.Budgets.MaxWallSeconds = 1_000_000_000_000
	for c := range d.Profile.Budgets.MaxCallsByCapability {
		d.Profile.Budgets.MaxCallsByCapability[c] = 1_000_000_000_000
	}
	tok, g, err := grant.Issue(d, grant.Binding{RunID: "run-1", WaveID: "wave-1", Issuer: "coord-1", IssuedAt: t0, JTI: "gw-1"}, key, nil)
	check(err)
	dir := filepath.Join(work, "gateway-store")
	check(os.RemoveAll(dir))
	s, err := grantfile.Open(dir)
	check(err)
	defer s.Close()
	v, err := grant.NewVerifier(trusted, grant.Options{Store: s, Meter: grant.NewMeter(), CacheSize: 1024})
	check(err)
	req := grant.Request{Audience: "worker_runtime", RunID: "run-1", WaveID: "wave-1", Now: t0.Add(time.Minute),
		Call: &grant.Call{Method: g.Payload.AllowedMethods[0].Method, ReadPaths: []string{"src/m0/main.go"}}}
	var n atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(2 * time.Second)
	start := time.Now()
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if _, err := v.Authorize(context.Background(), tok, req); err != nil {
					panic(err)
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// spendRate issues n distinct single-use grants, then verifies and spends
// them from 64 goroutines, and returns spends per second.
func spendRate(n int, key signing.PrivateKey, trusted *signing.TrustedKeys, d *grant.Derivation, open func() grant.Store) float64 {
	d2 := *d
	toks := make([][]byte, n)
	for i := range toks {
		tok, _, err := grant.Issue(&d2, grant.Binding{RunID: "run-1", WaveID: "wave-1", Issuer: "coord-1", IssuedAt: t0, JTI: fmt.Sprintf("s%07d", i)}, key, nil)
		check(err)
		toks[i] = tok
	}
	s := open()
	defer s.Close()
	v, err := grant.NewVerifier(trusted, grant.Options{Store: s})
	check(err)
	req := grant.Request{Audience: "worker_runtime", RunID: "run-1", WaveID: "wave-1", Now: t0.Add(time.Minute)}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if _, err := v.Spend(context.Background(), toks[i], req); err != nil {
					panic(err)
				}
			}
		}()
	}
	wg.Wait()
	rate := float64(n) / time.Since(start).Seconds()
	// Every acknowledged spend is there, and a second spend is refused.
	if _, err := v.Spend(context.Background(), toks[0], req); grant.CodeOf(err) != grant.CodeReplayed {
		fail(fmt.Sprintf("replay not refused: %v", err))
	}
	return rate
}

func pgSpendRate(n int, key signing.PrivateKey, trusted *signing.TrustedKeys, d *grant.Derivation) (float64, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgtest.Start(ctx)
	if err != nil {
		return 0, err.Error()
	}
	defer c.Close()
	url, _, err := c.CreateDatabase(ctx, "grantbench")
	if err != nil {
		return 0, err.Error()
	}
	return spendRate(n, key, trusted, d, func() grant.Store {
		s, err := grantpg.Open(context.Background(), url+"&pool_max_conns=64")
		check(err)
		return s
	}), ""
}

// fsyncRate is the floor of durable acknowledgements: serial appends, each
// fdatasync'ed, on the same filesystem.
func fsyncRate(dir string) float64 {
	f, err := os.Create(filepath.Join(dir, "fsync-floor"))
	check(err)
	defer f.Close()
	const n = 200
	start := time.Now()
	for i := 0; i < n; i++ {
		f.Write([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"))
		check(unix.Fdatasync(int(f.Fd())))
	}
	return n / time.Since(start).Seconds()
}

// fixture is a synthetic registry: 10 tools of 40 operations, 100
// capabilities of 4 operations each, a policy, and a card offering all.
type fixture struct {
	policy   *grant.Policy
	resolver *grant.Resolver
	catalog  *grant.Catalog
	index    *grant.Index
	card     *a2a.Card
	caps     []string
}

func newFixture(n int) *fixture {
	f := &fixture{catalog: &grant.Catalog{Contracts: map[string]*grant.Contract{}}}
	var specs grant.Specs
	pol, err := os.ReadFile("policy/policy_spec.json")
	check(err)
	f.policy, err = specs.ParsePolicy("policy/policy_spec.json", pol)
	check(err)
	res := map[string]any{"schema_version": grant.ResolverSchemaVersion}
	capsJSON := map[string]any{}
	for t := 0; t < 10; t++ {
		tool := fmt.Sprintf("tool-%02d", t)
		c := &grant.Contract{ID: tool, Version: "1.0.0", Digest: "sha256:" + strings.Repeat("0", 64), Skill: true}
		for o := 0; o < 40; o++ {
			cl := grant.ClassRead
			if o%4 == 3 {
				cl = grant.ClassWrite
			}
			se := grant.SideEffectNone
			if cl == grant.ClassWrite {
				se = grant.SideEffectArtifactPut
			}
			c.Operations = append(c.Operations, grant.Operation{ID: fmt.Sprintf("op_%03d", o), HTTPMethod: "POST", Tags: []string{fmt.Sprintf("fam%d", o/4)}, Class: cl, Declared: true, SideEffect: se})
		}
		f.catalog.Contracts[tool] = c
	}
	for i := 0; i < n; i++ {
		tool := fmt.Sprintf("tool-%02d", i%10)
		name := fmt.Sprintf("cap.%03d", i)
		ops := []string{}
		for o := 0; o < 4; o++ {
			ops = append(ops, fmt.Sprintf("op_%03d", (i/10)*4+o))
		}
		capsJSON[name] = map[string]any{"class": "write", "tool": tool, "operation_ids": ops,
			"constraints_template": map[string]any{"io": map[string]any{"read_roots": []string{fmt.Sprintf("src/m%d", i)}, "write_roots": []string{fmt.Sprintf("ops/runs/m%d", i)}}, "budgets": map[string]any{"max_calls": 10 + i}}}
		f.caps = append(f.caps, name)
	}
	res["capabilities"] = capsJSON
	rb, _ := json.Marshal(res)
	f.resolver, err = specs.ParseResolver("resolver.json", rb)
	check(err)
	f.index, err = grant.NewIndex(f.resolver, f.catalog)
	check(err)
	card := map[string]any{"name": "bench", "description": "d", "version": "1", "supportedInterfaces": []any{map[string]any{"url": "unix:///x", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}},
		"capabilities": map[string]any{}, "defaultInputModes": []string{"application/json"}, "defaultOutputModes": []string{"application/json"},
		"skills": []any{map[string]any{"id": "s", "name": "s", "description": "d", "tags": []string{}}},
		"x-dome": map[string]any{"kind": "runtime", "max_classes": []string{"read", "write"}, "capabilities": f.caps}}
	cb, _ := json.Marshal(card)
	var as a2a.Schemas
	f.card, err = as.ParseCard("bench.card.json", "runtime", cb)
	check(err)
	slices.Sort(f.caps)
	return f
}

func (f *fixture) sources() grant.Sources {
	return grant.Sources{Policy: f.policy, Index: f.index, Card: f.card, CardID: "runtime/bench", CardDigest: "sha256:" + strings.Repeat("1", 64)}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianDur(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func rate(r float64) string { return fmt.Sprintf("%.0f/s", r) }

// rates is the median rate with its range.
func rates(xs []float64) string {
	return fmt.Sprintf("%s [%.0f-%.0f]", rate(median(xs)), slices.Min(xs), slices.Max(xs))
}

// durs is the median duration with its range.
func durs(xs []time.Duration) string {
	r := func(d time.Duration) string { return d.Round(time.Microsecond).String() }
	return fmt.Sprintf("%s [%s-%s]", r(medianDur(xs)), r(slices.Min(xs)), r(slices.Max(xs)))
}

func ratio(a, b float64) string { return fmt.Sprintf("%.2fx", a/b) }

func verdict(ok bool, target string) string {
	if ok {
		return "met (" + target + ")"
	}
	return "MISSED (" + target + ")"
}

func printTable(rows [][]string) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t|\t"))
	}
	w.Flush()
}

func check(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/grant:", msg)
	os.Exit(1)
}
