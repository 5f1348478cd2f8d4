package agentlock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/schemaval"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// srv builds a server that fits most requirements; opts adjust it.
func srv(id, version string, opts ...func(*Server)) Server {
	s := Server{ID: id, Version: version, Endpoint: "https://" + id + "/" + version,
		Categories: []string{"c"}, Scopes: []string{"p", "q"},
		Data:  ServerData{Residency: "any", MaxSensitivity: "pii.high"},
		Trust: ServerTrust{Signed: true, Publisher: "pub-" + id}}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func residency(r string) func(*Server)  { return func(s *Server) { s.Data.Residency = r } }
func maxSens(m string) func(*Server)    { return func(s *Server) { s.Data.MaxSensitivity = m } }
func unsigned(s *Server)                { s.Trust.Signed = false }
func scopes(sc ...string) func(*Server) { return func(s *Server) { s.Scopes = sc } }
func cats(c ...string) func(*Server)    { return func(s *Server) { s.Categories = c } }
func actions(a ...string) func(*Server) { return func(s *Server) { s.Actions = a } }

func agent(mod ...func(*Agent)) *Agent {
	a := &Agent{Name: "t", Version: "1", Requires: Requires{MCP: []Requirement{{Category: "c", Permissions: []string{"p"}}}}}
	for _, m := range mod {
		m(a)
	}
	return a
}

func resolveOne(t *testing.T, a *Agent, servers ...Server) *Outcome {
	t.Helper()
	res, err := Resolve(a, &Index{Servers: servers}, Origin{})
	if err != nil {
		t.Fatal(err)
	}
	return &res.Requirements[0]
}

func selectedKey(o *Outcome) string {
	if o.Selected == nil {
		return ""
	}
	return o.Selected.ID + "@" + o.Selected.Version
}

func codes(o *Outcome, key string) []string {
	for _, r := range o.Rejected {
		if r.ID+"@"+r.Version == key {
			var c []string
			for _, x := range r.Reasons {
				c = append(c, x.Code)
			}
			return c
		}
	}
	return nil
}

// Seed 2.2 and 5: residency filtering.
func TestResolve_Residency(t *testing.T) {
	tests := []struct {
		agent, server string
		ok            bool
	}{
		{"us-only", "us-only", true}, {"us-only", "any", true}, {"us-only", "eu-only", false},
		{"eu-only", "eu-only", true}, {"eu-only", "any", true}, {"eu-only", "us-only", false},
		{"any", "us-only", true}, {"any", "eu-only", true}, {"any", "any", true},
		{"", "eu-only", true}, // no constraint: residency any
	}
	for _, tt := range tests {
		a := agent(func(a *Agent) { a.Constraints.Data.Residency = tt.agent })
		o := resolveOne(t, a, srv("s", "1", residency(tt.server)))
		if got := o.Selected != nil; got != tt.ok {
			t.Errorf("agent %q, server %q: selected=%v, want %v", tt.agent, tt.server, got, tt.ok)
		}
		if !tt.ok {
			r := o.Rejected[0].Reasons[0]
			if r.Code != ResidencyMismatch || r.Required != tt.agent || r.Server != tt.server {
				t.Errorf("agent %q, server %q: reason %+v", tt.agent, tt.server, r)
			}
		}
	}
}

// Seed 2.2 and 5: sensitivity filtering, over the whole order.
func TestResolve_Sensitivity(t *testing.T) {
	levels := Sensitivities()
	for i, need := range levels {
		for j, max := range levels {
			a := agent(func(a *Agent) { a.Constraints.Data.Sensitivity = need })
			o := resolveOne(t, a, srv("s", "1", maxSens(max)))
			want := i <= j
			if got := o.Selected != nil; got != want {
				t.Errorf("agent %s, server max %s: selected=%v, want %v", need, max, got, want)
			}
			if !want {
				r := o.Rejected[0].Reasons[0]
				if r.Code != SensitivityExceeded || r.Required != need || r.Server != max {
					t.Errorf("agent %s, server max %s: reason %+v", need, max, r)
				}
			}
		}
	}
	// No sensitivity constraint: public, which every server accepts.
	if o := resolveOne(t, agent(), srv("s", "1", maxSens("public"))); o.Selected == nil {
		t.Errorf("no constraint must accept a public-only server")
	}
}

// Seed 2.1 and 5: scope subset matching.
func TestResolve_ScopeSubset(t *testing.T) {
	need := func(p ...string) func(*Agent) {
		return func(a *Agent) { a.Requires.MCP[0].Permissions = p }
	}
	tests := []struct {
		need, have []string
		missing    []string
	}{
		{[]string{"p"}, []string{"p"}, nil},
		{[]string{"p"}, []string{"q", "p", "r"}, nil},
		{[]string{"p", "q"}, []string{"q", "p"}, nil},
		{[]string{"p", "q"}, []string{"p"}, []string{"q"}},
		{[]string{"z", "p", "a"}, []string{"p"}, []string{"a", "z"}},
		{[]string{"p"}, []string{}, []string{"p"}},
		{[]string{"P"}, []string{"p"}, []string{"P"}}, // scopes are case-sensitive
	}
	for _, tt := range tests {
		o := resolveOne(t, agent(need(tt.need...)), srv("s", "1", scopes(tt.have...)))
		if tt.missing == nil {
			if o.Selected == nil {
				t.Errorf("need %v, have %v: not selected: %+v", tt.need, tt.have, o.Rejected)
			}
			continue
		}
		if o.Selected != nil || o.Rejected[0].Reasons[0].Code != MissingScope || !reflect.DeepEqual(o.Rejected[0].Reasons[0].Missing, tt.missing) {
			t.Errorf("need %v, have %v: got %+v, want MISSING_SCOPE %v", tt.need, tt.have, o.Rejected, tt.missing)
		}
	}
}

// Seed 2.3 and 5: deterministic tie-break selection.
func TestResolve_TieBreak(t *testing.T) {
	tests := []struct {
		name    string
		servers []Server
		want    string
		order   []string // the alternatives, in order
	}{
		{"signed beats a smaller id", []Server{srv("a", "1.0.0", unsigned), srv("b", "1.0.0")}, "b@1.0.0", []string{"a@1.0.0"}},
		{"smallest id", []Server{srv("b", "1.0.0"), srv("a", "9.0.0"), srv("ab", "1.0.0")}, "a@9.0.0", []string{"ab@1.0.0", "b@1.0.0"}},
		{"ids compare by bytes", []Server{srv("a-b", "1"), srv("a.b", "1"), srv("A", "1")}, "A@1", []string{"a-b@1", "a.b@1"}},
		{"smallest version by SemVer", []Server{srv("a", "1.10.0"), srv("a", "1.4.0"), srv("a", "1.4.0-rc.1")}, "a@1.4.0-rc.1", []string{"a@1.4.0", "a@1.10.0"}},
		{"SemVer before other versions", []Server{srv("a", "2024.05"), srv("a", "10.0.0")}, "a@10.0.0", []string{"a@2024.05"}},
		{"other versions by bytes", []Server{srv("a", "r10"), srv("a", "r9")}, "a@r10", []string{"a@r9"}},
		{"unsigned only: smallest id", []Server{srv("z", "1", unsigned), srv("y", "2", unsigned)}, "y@2", []string{"z@1"}},
	}
	for _, tt := range tests {
		for range 20 { // the index order must not matter
			servers := append([]Server(nil), tt.servers...)
			rand.Shuffle(len(servers), func(i, j int) { servers[i], servers[j] = servers[j], servers[i] })
			o := resolveOne(t, agent(), servers...)
			var alts []string
			for _, c := range o.Alternatives {
				alts = append(alts, c.ID+"@"+c.Version)
			}
			if selectedKey(o) != tt.want || !reflect.DeepEqual(alts, tt.order) {
				t.Fatalf("%s: selected %s, alternatives %v; want %s, %v", tt.name, selectedKey(o), alts, tt.want, tt.order)
			}
		}
	}
}

// Every reason code, and every reason of a server listed (not just the first).
func TestResolve_ReasonCodes(t *testing.T) {
	a := agent(func(a *Agent) {
		a.Requires.MCP[0].Permissions = []string{"p", "write"}
		a.Constraints.Data = DataConstraints{Sensitivity: "pii.moderate", Residency: "eu-only"}
		a.Constraints.Actions.Forbid = []string{"delete", "email.send"}
		a.Trust.RequireSigned = true
	})
	ok := func(s *Server) { s.Scopes = []string{"p", "write"} }
	servers := []Server{
		srv("good", "1", ok),
		srv("other-cat", "1", ok, cats("d", "e")),
		srv("no-scope", "1"),
		srv("us", "1", ok, residency("us-only")),
		srv("low", "1", ok, maxSens("confidential")),
		srv("unsigned", "1", ok, unsigned),
		srv("deleter", "1", ok, actions("read", "email.send", "delete")),
		srv("everything", "1", unsigned, residency("us-only"), maxSens("public"), actions("delete")),
	}
	o := resolveOne(t, a, servers...)
	if selectedKey(o) != "good@1" {
		t.Fatalf("selected %s", selectedKey(o))
	}
	want := map[string][]string{
		"other-cat@1":  {MissingCategory},
		"no-scope@1":   {MissingScope},
		"us@1":         {ResidencyMismatch},
		"low@1":        {SensitivityExceeded},
		"unsigned@1":   {UnsignedNotAllowed},
		"deleter@1":    {ActionForbidden},
		"everything@1": {MissingScope, ResidencyMismatch, SensitivityExceeded, UnsignedNotAllowed, ActionForbidden},
	}
	for key, w := range want {
		if got := codes(o, key); !reflect.DeepEqual(got, w) {
			t.Errorf("%s: codes %v, want %v", key, got, w)
		}
	}
	for _, r := range o.Rejected {
		if r.ID == "deleter" && !reflect.DeepEqual(r.Reasons[0].Actions, []string{"delete", "email.send"}) {
			t.Errorf("ACTION_FORBIDDEN must name the actions: %+v", r.Reasons[0])
		}
		for _, x := range r.Reasons {
			if x.Message == "" {
				t.Errorf("%s: reason %s without a message", r.ID, x.Code)
			}
		}
	}
	// Rejected servers are listed by id.
	var ids []string
	for _, r := range o.Rejected {
		ids = append(ids, r.ID)
	}
	if !reflect.DeepEqual(ids, []string{"deleter", "everything", "low", "no-scope", "other-cat", "unsigned", "us"}) {
		t.Errorf("rejected order %v", ids)
	}
}

func TestResolve_Unsatisfiable(t *testing.T) {
	a := agent(func(a *Agent) {
		a.Requires.MCP = append(a.Requires.MCP, Requirement{Category: "nobody", Permissions: []string{"p"}})
	})
	res, err := Resolve(a, &Index{Servers: []Server{srv("s", "1")}}, Origin{})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || len(res.Unsatisfied()) != 1 || res.Unsatisfied()[0].Category != "nobody" {
		t.Fatalf("unsatisfied: %+v", res.Unsatisfied())
	}
	if _, err := res.Lock(); err == nil {
		t.Errorf("a failed resolution must not produce a lock")
	}
	if e := res.Explain(); e.Status != "unsatisfiable" {
		t.Errorf("status %q", e.Status)
	}
	// An empty index: every requirement unsatisfiable, nothing panics.
	res, _ = Resolve(a, &Index{}, Origin{})
	if len(res.Unsatisfied()) != 2 {
		t.Errorf("empty index: %+v", res)
	}
}

func TestSelectionHash_SeedFormula(t *testing.T) {
	sum := sha256.Sum256([]byte("report-kit@2.0.1|https://r/2|a.read,b.write,c"))
	want := "sha256:" + hex.EncodeToString(sum[:])
	if got := SelectionHash("report-kit", "2.0.1", "https://r/2", []string{"c", "b.write", "a.read"}); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// Seed 5: stable lockfile output ordering. Requirements in any order,
// permissions in any order, the index in any order: the same bytes.
func TestLock_StableOrdering(t *testing.T) {
	servers := []Server{
		srv("x", "1.0.0", cats("b", "a"), scopes("p3", "p1", "p2")),
		srv("y", "2.0.0", cats("a", "c"), scopes("p1", "p2", "p3")),
		srv("z", "0.1.0", cats("c"), scopes("p2", "p1"), unsigned),
		srv("y", "1.0.0", cats("c"), scopes("p1")),
	}
	reqs := []Requirement{
		{Category: "c", Permissions: []string{"p1"}},
		{Category: "a", Permissions: []string{"p3", "p1"}},
		{Category: "b", Permissions: []string{"p2", "p3"}},
	}
	var first, firstExplain []byte
	for i := range 50 {
		ss := append([]Server(nil), servers...)
		rand.Shuffle(len(ss), func(i, j int) { ss[i], ss[j] = ss[j], ss[i] })
		rs := make([]Requirement, len(reqs))
		for k, r := range reqs {
			p := append([]string(nil), r.Permissions...)
			rand.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
			rs[k] = Requirement{Category: r.Category, Permissions: p}
		}
		rand.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
		a := &Agent{Name: "t", Version: "1", Requires: Requires{MCP: rs}}
		res, err := Resolve(a, &Index{Servers: ss, Digest: "sha256:" + strings.Repeat("0", 64)}, Origin{Digest: "sha256:" + strings.Repeat("0", 64)})
		if err != nil {
			t.Fatal(err)
		}
		lock, err := res.Lock()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := lock.Marshal()
		e, _ := res.Explain().Marshal()
		if i == 0 {
			first, firstExplain = b, e
			var cats []string
			for _, s := range lock.Selections {
				cats = append(cats, s.Category+"="+s.ID+"@"+s.Version+":"+strings.Join(s.Scopes, ","))
			}
			if want := []string{"a=x@1.0.0:p1,p3", "b=x@1.0.0:p2,p3", "c=y@1.0.0:p1"}; !reflect.DeepEqual(cats, want) {
				t.Fatalf("selections %v, want %v", cats, want)
			}
			continue
		}
		if !bytes.Equal(b, first) || !bytes.Equal(e, firstExplain) {
			t.Fatalf("run %d: output depends on input order:\n%s\nvs\n%s", i, b, first)
		}
	}
}

// TestHelloAgent_Golden resolves examples/hello-agent and compares the lock
// and explain document with testdata/ (go test -update rewrites them), and
// checks both against their schemas. The index is read in a shuffled order
// too: the lock stays byte-identical.
func TestHelloAgent_Golden(t *testing.T) {
	dir := "../../examples/hello-agent"
	ad, err := os.ReadFile(filepath.Join(dir, "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := os.ReadFile(filepath.Join(dir, "mcp.index.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseAgents("agents.md", ad)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := ParseIndex("mcp.index.json", id)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Resolve(a, idx, Origin{Digest: idx.Digest})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := res.Lock()
	if err != nil {
		t.Fatal(err)
	}
	lockBytes, _ := lock.Marshal()
	explain, _ := res.Explain().Marshal()
	golden(t, "hello-agent.lock.golden", lockBytes)
	golden(t, "hello-agent.resolution.golden", explain)
	for name, b := range map[string][]byte{SchemaLock: lockBytes, SchemaResolution: explain} {
		doc, _, err := schemaval.DecodeLocated(b)
		if err != nil {
			t.Fatal(err)
		}
		if v := schema(name).Violations(doc); len(v) > 0 {
			t.Errorf("output breaks %s: %v", name, v)
		}
	}
	// The committed example lock is what dome writes.
	committed, err := os.ReadFile(filepath.Join(dir, "agents.lock"))
	if err != nil || !bytes.Equal(committed, lockBytes) {
		t.Errorf("examples/hello-agent/agents.lock is stale (run dome agent resolve there): %v", err)
	}
	// The example index is the registry's index.
	reg, err := os.ReadFile("../../registry/mcp/index.json")
	if err != nil || !bytes.Equal(reg, id) {
		t.Errorf("examples/hello-agent/mcp.index.json and registry/mcp/index.json differ: %v", err)
	}
	// Shuffled index order: byte-identical lock.
	for range 20 {
		ss := append([]Server(nil), idx.Servers...)
		rand.Shuffle(len(ss), func(i, j int) { ss[i], ss[j] = ss[j], ss[i] })
		r2, _ := Resolve(a, &Index{Servers: ss}, Origin{Digest: idx.Digest})
		l2, _ := r2.Lock()
		b2, _ := l2.Marshal()
		if !bytes.Equal(b2, lockBytes) {
			t.Fatalf("shuffled index gives a different lock")
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

func TestLockRoundTripAndChanges(t *testing.T) {
	a := agent()
	res, _ := Resolve(a, &Index{Servers: []Server{srv("s", "1.0.0"), srv("s", "2.0.0")}}, Origin{Digest: "sha256:" + strings.Repeat("a", 64)})
	lock, _ := res.Lock()
	b, _ := lock.Marshal()
	back, err := ParseLock("agents.lock", b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, lock) {
		t.Errorf("round trip: %+v vs %+v", back, lock)
	}
	if c := Changes(back, lock); len(c) != 0 {
		t.Errorf("no changes expected: %v", c)
	}
	res2, _ := Resolve(agent(func(a *Agent) { a.Constraints.Data.Sensitivity = "internal" }), &Index{Servers: []Server{srv("s", "2.0.0")}}, Origin{Digest: "sha256:" + strings.Repeat("b", 64), Commit: strings.Repeat("c", 40), Path: "registry/mcp/index.json"})
	lock2, _ := res2.Lock()
	got := strings.Join(Changes(lock, lock2), "\n")
	for _, want := range []string{"agents.md frontmatter changed", "index path", "index commit: (none) -> cccc", "index digest", "c: s@1.0.0 -> s@2.0.0"} {
		if !strings.Contains(got, want) {
			t.Errorf("changes lack %q:\n%s", want, got)
		}
	}
	if _, err := ParseLock("agents.lock", []byte(`{"lockfileVersion": 2}`)); err == nil {
		t.Errorf("a bad lock must not parse")
	}
}

func TestSchemasCompile(t *testing.T) {
	for _, n := range []string{SchemaAgents, SchemaIndex, SchemaLock, SchemaResolution} {
		b, err := SchemaBytes(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schemaval.Compile(n, b); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}
