package contracttest

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/netpolicy"
)

// HostVectors are allowlist entries every runtime must judge as dome does
// (pkg/netpolicy): the same problem text, or none.
var HostVectors = []string{
	"api.example.com", "xn--bcher-kva.example", "127.0.0.1", "[::1]", "[2001:db8::1]",
	"", "api.example.com:443", "[::1]:8080", "bücher.example", "*.example.com", "api.example.com.",
	"API.example.com", "https://api.example.com", "127.1", "0x7f.0.0.1", "010.0.0.1", "2130706433",
	"::1", "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]", "[fe80::1%eth0]", "[::1", "a..b", "-a.example",
	"a_b.example", "a b", strings.Repeat("a", 64) + ".example",
}

// URLVectors are base URLs every runtime must read the host of as dome
// does (pkg/netpolicy.HostOfURL) and judge against the policy.
var URLVectors = []string{
	"https://PETSTORE.example.com./v1", "ftp://a.example/", "https://user@a.example/", "//a.example/x",
	"https:///x", "http://127.1/", "http://[::1]:8080/x", "https://a.example:8443/v1?x=1#f",
}

// runSDKs runs the planned scenarios through every client whose toolchain
// is here and adds the results to the report: per language the build, the
// golden cases, the enforcement and error-mapping scenarios, the loader
// scenarios and the host vectors; then the cross-language comparison.
func runSDKs(ctx context.Context, opts Options, rep *Report, spec *specOps, cases, kept []*Case, clients []*codegen.Client) {
	if len(clients) == 0 {
		return
	}
	pol := clients[0].Policy
	p := &planner{pol: pol, spec: spec, models: models{}, goSyms: map[string]string{}, manif: clients[0].Manifest, base: baseURL(pol)}
	for _, c := range clients {
		p.models[c.Language] = c.Model
		if c.Language == "go" {
			for _, o := range c.Index.Operations {
				p.goSyms[o.OperationID] = o.Symbol
			}
		}
	}
	if len(p.goSyms) == 0 {
		n := codegen.NewNamer(codegen.BundleSpec{Engine: "oapi-codegen"})
		for id := range pol.Operations {
			p.goSyms[id] = n.Operation(id)
		}
	}
	// The policy is the same in every client.
	same := CheckResult{Name: "same policy in every client", Status: Pass}
	a, _ := pol.JSON()
	for _, c := range clients[1:] {
		if b, _ := c.Policy.JSON(); a != b {
			same.Status, same.Problems = Fail, append(same.Problems, c.Language+" client: a different policy")
		}
	}
	rep.Checks = append(rep.Checks, same)
	scenarios, refused := p.build(kept)
	byCase := map[string]*CaseResult{}
	for i := range rep.Cases {
		byCase[rep.Cases[i].Name] = &rep.Cases[i]
	}
	for name, why := range refused {
		if cr := byCase[name]; cr != nil {
			cr.Status = Excluded
			cr.Problems = append(cr.Problems, why)
		}
	}
	vec := vectorsIn{Hosts: HostVectors, URLs: URLVectors}
	outs := map[string]*driverOutput{}
	var langs []string
	for _, c := range clients {
		lang := c.Language
		tool, why := toolFor(opts, lang)
		run := CheckResult{Name: buildName(lang), Language: lang}
		if tool == "" {
			run.Status, run.Problems = missing(opts, lang, why)
			rep.Checks = append(rep.Checks, run)
			continue
		}
		own := make([]*scenario, 0, len(scenarios))
		for _, s := range scenarios {
			cp := *s
			if cp.Load && cp.ArtifactHash == p.manif.ClientArtifactHash {
				cp.ArtifactHash = c.Manifest.ClientArtifactHash
			}
			own = append(own, &cp)
		}
		runs, err := runDriver(ctx, opts, c, own, vec)
		if err != nil {
			run.Status, run.Problems = Fail, []string{err.Error()}
			rep.Checks = append(rep.Checks, run)
			continue
		}
		run.Status = Pass
		rep.Checks = append(rep.Checks, run)
		out := runs[0].out
		outs[lang] = out
		langs = append(langs, lang)
		groups := map[string]*CheckResult{}
		var order []string
		for _, r := range runs {
			label := lang
			if len(runs) > 1 {
				label += " (" + r.mode + ")"
			}
			for i, s := range own {
				g := groupName(s, opts.Server != nil)
				if groups[g] == nil {
					groups[g] = &CheckResult{Name: g, Language: lang, Status: Pass}
					order = append(order, g)
				}
				probs := evaluate(label, s, &r.out.Scenarios[i], r.mock, basePath(p.base))
				if r.out != out {
					// A second run of the same client must end as the first.
					if d := sameOutcome(s, &out.Scenarios[i], &r.out.Scenarios[i]); d != "" {
						probs = append(probs, label+" client: "+runs[0].mode+" vs "+r.mode+": "+d)
					}
				}
				if len(probs) == 0 {
					continue
				}
				groups[g].Status = Fail
				groups[g].Problems = append(groups[g].Problems, s.Name+": "+strings.Join(probs, "; "))
				if s.kind == "golden" {
					if cr := byCase[s.caseName]; cr != nil {
						cr.Status = Fail
						cr.Problems = append(cr.Problems, probs...)
					}
				}
			}
		}
		vc := CheckResult{Name: fmt.Sprintf("allow_hosts and URL vectors (%d+%d)", len(vec.Hosts), len(vec.URLs)), Language: lang, Status: Pass}
		vc.Problems = checkVectors(pol, vec, out)
		if len(vc.Problems) > 0 {
			vc.Status = Fail
		}
		for _, g := range order {
			groups[g].Name = fmt.Sprintf("%s (%d)", g, countGroup(own, g))
			rep.Checks = append(rep.Checks, *groups[g])
		}
		rep.Checks = append(rep.Checks, vc)
		if lang == "ts" {
			rep.Checks = append(rep.Checks, checkTransport(runs))
		}
	}
	if len(langs) > 1 {
		eq := CheckResult{Name: "same outcomes in " + strings.Join(langs, ", "), Status: Pass}
		first := outs[langs[0]]
		for _, l := range langs[1:] {
			o := outs[l]
			for i, s := range scenarios {
				if d := sameOutcome(s, &first.Scenarios[i], &o.Scenarios[i]); d != "" {
					eq.Problems = append(eq.Problems, langs[0]+" vs "+l+": "+d)
				}
			}
			if strings.Join(first.Hosts, "\n") != strings.Join(o.Hosts, "\n") {
				eq.Problems = append(eq.Problems, langs[0]+" vs "+l+": allow_hosts vectors differ")
			}
			for i := range first.URLs {
				if i < len(o.URLs) && first.URLs[i] != o.URLs[i] {
					eq.Problems = append(eq.Problems, fmt.Sprintf("%s vs %s: URL %q: %q vs %q", langs[0], l, vec.URLs[i], first.URLs[i].Error, o.URLs[i].Error))
				}
			}
		}
		if len(eq.Problems) > 0 {
			eq.Status = Fail
		}
		rep.Checks = append(rep.Checks, eq)
	}
	for _, n := range p.notes {
		rep.Notes = append(rep.Notes, n)
	}
	sort.Strings(rep.Notes)
}

// checkTransport checks how the TypeScript client's attempts carried their
// timeouts in each run: under Node's own fetch, through undici dispatchers,
// with an AbortSignal only on a client's first attempt, which finds out
// whether the fetch takes a dispatcher; under a fetch that drops
// dispatchers, an AbortSignal on every attempt.
func checkTransport(runs []driverRun) CheckResult {
	cr := CheckResult{Name: "timeouts: undici dispatchers under node, AbortSignals elsewhere", Language: "ts", Status: Pass}
	for _, r := range runs {
		t := r.out.Transport
		switch {
		case t == nil:
			cr.Problems = append(cr.Problems, r.mode+": the driver reported no transport counts")
		case r.mode == "node" && (t.Dispatcher != t.Requests || t.Requests > 0 && t.Signal >= t.Requests):
			cr.Problems = append(cr.Problems, fmt.Sprintf("node: of %d requests, %d carried a dispatcher and %d an AbortSignal; want every one a dispatcher, and an AbortSignal only on a client's first", t.Requests, t.Dispatcher, t.Signal))
		case r.mode == "signal" && (t.Signal != t.Requests || t.Dispatcher != 0):
			cr.Problems = append(cr.Problems, fmt.Sprintf("signal: of %d requests, %d carried an AbortSignal and %d reached fetch with a dispatcher; want every one an AbortSignal", t.Requests, t.Signal, t.Dispatcher))
		}
	}
	if len(cr.Problems) > 0 {
		cr.Status = Fail
	}
	return cr
}

func groupName(s *scenario, server bool) string {
	switch s.kind {
	case "golden":
		if server {
			return "golden cases against the server"
		}
		return "golden cases against the mock server"
	case "loader":
		return "loader: pins, digests, tampered copies"
	default:
		return "enforcement and error mapping"
	}
}

func countGroup(ss []*scenario, g string) int {
	n := 0
	for _, s := range ss {
		if groupName(s, false) == g || groupName(s, true) == g {
			n++
		}
	}
	return n
}

func buildName(lang string) string {
	switch lang {
	case "go":
		return "go build + driver"
	case "ts":
		return "tsc + driver under node"
	case "python":
		return "python3 -m compileall + driver"
	}
	return lang + " driver"
}

// toolFor returns the command a language's check needs, or "" and why.
func toolFor(opts Options, lang string) (string, string) {
	switch lang {
	case "go":
		return opts.Go, "the Go toolchain (go) is not on PATH"
	case "ts":
		if opts.TSC == "" {
			return "", "the TypeScript compiler is not installed (npm ci --prefix contract-tests/ts, or set DOME_TSC)"
		}
		if opts.Node == "" {
			return "", "node is not on PATH (set DOME_NODE)"
		}
		return opts.TSC, ""
	case "python":
		return opts.Python, "python3 is not on PATH"
	}
	return "", "no driver for " + lang
}

// checkVectors compares a driver's verdicts on the vectors with dome's.
func checkVectors(pol *codegen.Policy, vec vectorsIn, out *driverOutput) []string {
	var p []string
	for i, h := range vec.Hosts {
		want := ""
		if _, err := netpolicy.CheckAllowHost(h); err != nil {
			want = err.Problem
		}
		if i >= len(out.Hosts) || out.Hosts[i] != want {
			got := ""
			if i < len(out.Hosts) {
				got = out.Hosts[i]
			}
			p = append(p, fmt.Sprintf("allow_hosts entry %s: %q, dome says %q", netpolicy.Quote(h), got, want))
		}
	}
	for i, u := range vec.URLs {
		want := ""
		host, err := netpolicy.HostOfURL(u)
		switch {
		case err != nil:
			want = "base URL: " + err.Error()
		case pol.AllowHosts != nil && !contains(pol.AllowHosts, host):
			allowed := "none"
			if len(pol.AllowHosts) > 0 {
				allowed = strings.Join(pol.AllowHosts, ", ")
			}
			want = fmt.Sprintf("base URL: host %s is not in net.allow_hosts of profile %s (allowed: %s)", netpolicy.Quote(host), pol.ProfileID, allowed)
		}
		if i >= len(out.URLs) || out.URLs[i].Error != want {
			got := ""
			if i < len(out.URLs) {
				got = out.URLs[i].Error
			}
			p = append(p, fmt.Sprintf("URL %s: %q, dome says %q", netpolicy.Quote(u), got, want))
		}
	}
	return p
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
