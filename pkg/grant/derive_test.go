package grant_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/a2a"
	"github.com/dome-registry/dome/pkg/grant"
)

func TestDerive_WorkerGetsTheIntersection(t *testing.T) {
	f := newFixture(t)
	d, err := grant.Derive(f.workerSources(), grant.Need{NodeID: "node-1", Capabilities: []string{"repo.propose", "repo.read"}, Role: grant.RoleWorker})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range d.Profile.AllowedMethods {
		got = append(got, m.Method+":"+string(m.Class))
	}
	want := "patch-proposal/submit_metadata:write patch-proposal/submit_patch:write repo-read/get_base_ref:read repo-read/get_diff_stats:read repo-read/grep:read repo-read/list_tree:read repo-read/read_file:read"
	if strings.Join(got, " ") != want {
		t.Fatalf("methods:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if !d.Profile.SingleUse {
		t.Error("a grant with write methods must be single-use")
	}
	if d.Profile.Audience != "worker_runtime" || d.TTLSeconds != 900 {
		t.Errorf("audience %q ttl %d", d.Profile.Audience, d.TTLSeconds)
	}
	c := d.Profile.Constraints
	if strings.Join(c.IO.WriteRoots, ",") != "." || strings.Join(c.IO.ReadRoots, ",") != "." {
		t.Errorf("roots: read %v write %v", c.IO.ReadRoots, c.IO.WriteRoots)
	}
	if strings.Join(c.IO.DenyGlobs, ",") != "**/*.key,**/*.pem,**/.env,**/.git/**" {
		t.Errorf("deny globs: %v", c.IO.DenyGlobs)
	}
	b := d.Profile.Budgets
	if b.MaxCalls != 1020 || b.MaxCallsByCapability["repo.read"] != 1000 || b.MaxCallsByCapability["repo.propose"] != 20 || b.MaxWallSeconds != 300 {
		t.Errorf("budgets: %+v", b)
	}
	if strings.Join(d.Profile.Contracts, ",") != "patch-proposal@1.0.0,repo-read@1.0.0" {
		t.Errorf("contracts: %v", d.Profile.Contracts)
	}
	if !strings.HasPrefix(d.Profile.ProfileID, "tp-") || len(d.Profile.ProfileID) != 23 {
		t.Errorf("profile id %q", d.Profile.ProfileID)
	}
	if len(d.Explain.Granted) != 7 || len(d.Explain.Excluded) != 0 {
		t.Errorf("explain: %d granted, %d excluded", len(d.Explain.Granted), len(d.Explain.Excluded))
	}
	// Deterministic: same inputs, same bytes.
	d2, _ := grant.Derive(f.workerSources(), grant.Need{NodeID: "node-1", Capabilities: []string{"repo.read", "repo.propose", "repo.read"}, Role: grant.RoleWorker})
	if d2.Profile.ProfileID != d.Profile.ProfileID || d2.InputsHash != d.InputsHash {
		t.Error("derivation is not deterministic")
	}
}

func TestDerive_Explain(t *testing.T) {
	f := newFixture(t)
	d, err := grant.Derive(f.workerSources(), grant.Need{Capabilities: []string{"repo.read"}, Role: grant.RoleWorker})
	if err != nil {
		t.Fatal(err)
	}
	if d.Profile.SingleUse {
		t.Error("read-only grant is single-use")
	}
	// The coordinator's view: every repo-admin method is excluded by rule.
	dc, err := grant.Derive(f.coordSources(), grant.Need{Capabilities: []string{"repo.integrate"}, Role: grant.RoleCoordinator})
	if err != nil {
		t.Fatal(err)
	}
	if dc.Profile.Audience != "coordinator" {
		t.Fatalf("audience %s", dc.Profile.Audience)
	}
	// petstore: read capability only; the other methods are explained.
	dp, err := grant.Derive(grant.Sources{Policy: f.policy, Index: f.index, Card: petCard(), CardID: "tool/pets"}, grant.Need{Capabilities: []string{"pets.read"}, Role: grant.RoleWorker})
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{}
	for _, e := range dp.Explain.Excluded {
		rules[e.Method] = e.Rule
	}
	if !strings.Contains(rules["petstore/deletePet"], "pets.admin (admin)") || !strings.Contains(rules["petstore/createPet"], "pets.write (write)") {
		t.Errorf("excluded rules: %v", rules)
	}
	if strings.Join(dp.Profile.Constraints.Net.AllowHosts, ",") != "petstore.example.com" {
		t.Errorf("hosts %v", dp.Profile.Constraints.Net.AllowHosts)
	}
}

func TestDerive_Refusals(t *testing.T) {
	f := newFixture(t)
	planner := f.workerSources()
	planner.Card, planner.CardID = f.coord, "runtime/dome-planner"
	cases := []struct {
		name string
		src  grant.Sources
		need grant.Need
		code grant.Code
	}{
		{"unknown capability", f.workerSources(), grant.Need{Capabilities: []string{"repo.nuke"}, Role: "worker"}, grant.CodeUnknownCapability},
		{"card without the capability", f.workerSources(), grant.Need{Capabilities: []string{"pets.read"}, Role: "worker"}, grant.CodeCardLacksCapability},
		{"node asking for admin", f.workerSources(), grant.Need{Capabilities: []string{"repo.integrate"}, Role: "worker"}, grant.CodeCardLacksCapability},
		{"worker asking for admin on an admin card", f.coordSources(), grant.Need{Capabilities: []string{"repo.integrate"}, Role: "worker"}, grant.CodeClassNotPermitted},
		{"planner asking for admin", planner, grant.Need{Capabilities: []string{"repo.integrate"}, Role: "planner"}, grant.CodeClassNotPermitted},
		{"worker asking for the coordinator audience", f.workerSources(), grant.Need{Capabilities: []string{"repo.read"}, Role: "worker", Audience: "coordinator"}, grant.CodeAudienceNotPermitted},
		{"planner asking for the coordinator audience", f.workerSources(), grant.Need{Capabilities: []string{"repo.read"}, Role: "planner", Audience: "coordinator"}, grant.CodeAudienceNotPermitted},
		{"unknown audience", f.workerSources(), grant.Need{Capabilities: []string{"repo.read"}, Role: "worker", Audience: "cluster"}, grant.CodeAudienceNotPermitted},
		{"ttl over the cap", f.workerSources(), grant.Need{Capabilities: []string{"repo.read"}, Role: "worker", TTLSeconds: 3601}, grant.CodeTTLOverCap},
		{"no capability", f.workerSources(), grant.Need{Role: "worker"}, grant.CodeBadRequest},
		{"bad role", f.workerSources(), grant.Need{Capabilities: []string{"repo.read"}, Role: "root"}, grant.CodeBadRequest},
		{"worker acting as coordinator", f.coordSources(), grant.Need{Capabilities: []string{"repo.integrate"}, Role: "worker", ActingAsCoordinator: true}, grant.CodeBadRequest},
		{"bad node id", f.workerSources(), grant.Need{NodeID: "../x", Capabilities: []string{"repo.read"}, Role: "worker"}, grant.CodeBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := grant.Derive(c.src, c.need)
			if grant.CodeOf(err) != c.code {
				t.Fatalf("err = %v, want code %s", err, c.code)
			}
			if !c.code.Input() {
				t.Errorf("%s should be an input error", c.code)
			}
		})
	}
	// A planner acting as coordinator may integrate.
	d, err := grant.Derive(f.coordSources(), grant.Need{Capabilities: []string{"repo.integrate"}, Role: "planner", ActingAsCoordinator: true})
	if err != nil || d.Profile.Audience != "coordinator" || d.Explain.EffectiveRole != "coordinator" {
		t.Fatalf("planner in hat: %v %+v", err, d)
	}
}

func TestDerive_A2AProfileNarrows(t *testing.T) {
	f := newFixture(t)
	src := f.workerSources()
	src.Profile, src.ProfileRef = f.profiles["patch-worker"], "patch-worker@test"
	d, err := grant.Derive(src, grant.Need{Capabilities: []string{"repo.read", "repo.propose"}, Role: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Profile.Budgets.MaxCalls != 200 || d.Profile.Budgets.MaxWallSeconds != 240 || d.Profile.Budgets.MaxCallsByCapability["repo.read"] != 200 {
		t.Errorf("budgets %+v", d.Profile.Budgets)
	}
	if !strings.Contains(strings.Join(d.Profile.Constraints.IO.DenyGlobs, ","), "**/secrets/**") {
		t.Errorf("deny %v", d.Profile.Constraints.IO.DenyGlobs)
	}
	if d.DeterminismSeed != "7" {
		t.Errorf("seed %q", d.DeterminismSeed)
	}
	// The profile does not grant repo.integrate, and is for another card.
	if _, err := grant.Derive(src, grant.Need{Capabilities: []string{"repo.read"}, Role: "worker", Audience: "worker_runtime", Narrow: nil}); err != nil {
		t.Fatal(err)
	}
	other := src
	other.CardID = "runtime/dome-coordinator"
	if _, err := grant.Derive(other, grant.Need{Capabilities: []string{"repo.read"}, Role: "worker"}); grant.CodeOf(err) != grant.CodeProfileMismatch {
		t.Fatalf("card mismatch: %v", err)
	}
	// Request narrowing only narrows.
	one := int64(5)
	d, err = grant.Derive(f.workerSources(), grant.Need{Capabilities: []string{"repo.read"}, Role: "worker", Narrow: &grant.Template{IO: &grant.IOTemplate{ReadRoots: []string{"docs", "src/a"}}, Budgets: &grant.BudgetsTemplate{MaxCalls: &one}, Net: &grant.NetTemplate{AllowHosts: []string{"evil.example.com"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Profile.Constraints.IO.ReadRoots, ",") != "docs,src/a" || d.Profile.Budgets.MaxCalls != 5 || len(d.Profile.Constraints.Net.AllowHosts) != 0 {
		t.Errorf("narrowed: %+v %+v", d.Profile.Constraints, d.Profile.Budgets)
	}
}

func petCard() *a2a.Card {
	return mustCard(`{"name":"pets","description":"d","version":"1","supportedInterfaces":[{"url":"https://x","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["application/json"],"defaultOutputModes":["application/json"],"skills":[{"id":"petstore","name":"p","description":"d","tags":[]}],"x-dome":{"kind":"tool","max_classes":["read","write"],"capabilities":["pets.read","pets.write"]}}`)
}

func mustCard(s string) *a2a.Card {
	var as a2a.Schemas
	c, err := as.ParseCard("test", "", []byte(s))
	if err != nil {
		panic(err)
	}
	return c
}

// The fast profile_id encoding is the canonical one, for every shape of
// profile the example registry derives.
func TestProfileID_Canonical(t *testing.T) {
	f := newFixture(t)
	for _, n := range []grant.Need{
		{Capabilities: []string{"repo.read", "repo.propose"}, Role: "worker", NodeID: "node-1"},
		{Capabilities: []string{"repo.read"}, Role: "worker", Narrow: &grant.Template{IO: &grant.IOTemplate{DenyGlobs: []string{"**/é<&>/**", `a\*`}}}},
	} {
		d, err := grant.Derive(f.workerSources(), n)
		if err != nil {
			t.Fatal(err)
		}
		c, err := grant.ProfileCanonical(d.Profile)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(c)
		if want := "tp-" + hex.EncodeToString(sum[:10]); d.Profile.ProfileID != want {
			t.Errorf("profile id %s, canonical digest gives %s", d.Profile.ProfileID, want)
		}
	}
	if _, err := grant.Derive(f.workerSources(), grant.Need{Capabilities: []string{"repo.read"}, Role: "worker", Narrow: &grant.Template{IO: &grant.IOTemplate{DenyGlobs: []string{"a\u2028b"}}}}); grant.CodeOf(err) != grant.CodeBadRequest {
		t.Errorf("a line separator in a glob: %v", err)
	}
}
