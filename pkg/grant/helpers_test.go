package grant_test

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/a2a"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/signing"
)

// t0 is the fixed issue time of the tests.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testCatalog mirrors the example registry's skill contracts and petstore.
func testCatalog() *grant.Catalog {
	op := func(id, tag string, c grant.Class, se string) grant.Operation {
		return grant.Operation{ID: id, HTTPMethod: "POST", Path: "/" + id, Tags: []string{tag}, Class: c, Declared: true, SideEffect: se, IdempotencyKey: c.Mutates()}
	}
	rr := []grant.Operation{
		op("get_base_ref", "repo.read", grant.ClassRead, "none"), op("get_diff_stats", "repo.read", grant.ClassRead, "none"),
		op("grep", "repo.read", grant.ClassRead, "none"), op("list_tree", "repo.read", grant.ClassRead, "none"),
		op("read_file", "repo.read", grant.ClassRead, "none"),
	}
	pp := []grant.Operation{
		op("submit_metadata", "patch.propose", grant.ClassWrite, "proposal_register"),
		op("submit_patch", "patch.propose", grant.ClassWrite, "artifact_put"),
	}
	ra := []grant.Operation{
		op("apply_patch", "integration", grant.ClassAdmin, "artifact_put"), op("checkpoint", "integration", grant.ClassAdmin, "artifact_put"),
		op("create_integration_worktree", "integration", grant.ClassAdmin, "artifact_put"), op("promote", "promotion", grant.ClassAdmin, "artifact_put"),
		op("rollback", "integration", grant.ClassAdmin, "artifact_put"), op("run_validation", "validation", grant.ClassAdmin, "artifact_put"),
	}
	http := func(id, method string, tags ...string) grant.Operation {
		return grant.Operation{ID: id, HTTPMethod: method, Path: "/x", Tags: tags, Class: grant.InferClass(method, tags)}
	}
	pet := []grant.Operation{
		http("createPet", "POST", "pets"), http("deletePet", "DELETE", "pets", "admin"), http("getOrder", "GET", "store"),
		http("listPets", "GET", "pets"), http("placeOrder", "POST", "store"), http("showPetById", "GET", "pets"), http("updatePet", "PUT", "pets"),
	}
	tk := []grant.Operation{
		http("addComment", "POST", "comments"), http("createTicket", "POST", "tickets"), http("deleteTicket", "DELETE", "tickets", "admin"),
		http("getAuditLog", "GET", "admin"), http("getTicket", "GET", "tickets"), http("listAgents", "GET", "agents"),
		http("listComments", "GET", "comments"), http("listTickets", "GET", "tickets"), http("updateTicket", "PATCH", "tickets"),
		http("upsertAgent", "PUT", "agents", "admin"),
	}
	inv := []grant.Operation{
		http("createItem", "POST", "items"), http("getItem", "GET", "items"), http("getStockLevel", "GET", "stock"),
		http("listItems", "GET", "items"), http("listWarehouses", "GET", "warehouses"), http("recordMovement", "POST", "stock"),
		http("reindexStock", "POST", "admin"), http("retireItem", "DELETE", "items", "admin"), http("upsertWarehouse", "PUT", "warehouses", "admin"),
	}
	c := func(id string, skill bool, ops []grant.Operation) *grant.Contract {
		return &grant.Contract{ID: id, Version: "1.0.0", Commit: "0123456789abcdef0123456789abcdef01234567", Digest: "sha256:" + string(bytes.Repeat([]byte("ab"), 32)), Skill: skill, Operations: ops}
	}
	return &grant.Catalog{Contracts: map[string]*grant.Contract{
		"repo-read": c("repo-read", true, rr), "patch-proposal": c("patch-proposal", true, pp), "repo-admin": c("repo-admin", true, ra),
		"petstore": c("petstore", false, pet), "ticketing": c("ticketing", false, tk), "inventory": c("inventory", false, inv),
	}}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is the example policy, resolver and cards.
type fixture struct {
	specs    *grant.Specs
	policy   *grant.Policy
	index    *grant.Index
	worker   *a2a.Card
	coord    *a2a.Card
	key      signing.PrivateKey
	trusted  *signing.TrustedKeys
	other    signing.PrivateKey // a key nobody trusts
	profiles map[string]*a2a.Profile
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{specs: &grant.Specs{}}
	var err error
	if f.policy, err = f.specs.ParsePolicy("policy/policy_spec.json", readFile(t, "../../policy/policy_spec.json")); err != nil {
		t.Fatal(err)
	}
	r, err := f.specs.ParseResolver("policy/resolver_spec.json", readFile(t, "../../policy/resolver_spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.index, err = grant.NewIndex(r, testCatalog()); err != nil {
		t.Fatal(err)
	}
	var as a2a.Schemas
	if f.worker, err = as.ParseCard("worker", "runtime", readFile(t, "../../registry/a2a/cards/runtime/dome-worker.card.json")); err != nil {
		t.Fatal(err)
	}
	if f.coord, err = as.ParseCard("coordinator", "runtime", readFile(t, "../../registry/a2a/cards/runtime/dome-coordinator.card.json")); err != nil {
		t.Fatal(err)
	}
	f.profiles = map[string]*a2a.Profile{}
	for _, id := range []string{"patch-worker"} {
		p, err := as.ParseProfile(id, id, readFile(t, "../../registry/a2a/profiles/"+id+".profile.json"))
		if err != nil {
			t.Fatal(err)
		}
		f.profiles[id] = p
	}
	f.key = fixedKey("coord-1", 1)
	f.other = fixedKey("coord-1", 2)
	if f.trusted, err = signing.NewTrustedKeys(f.key.Public()); err != nil {
		t.Fatal(err)
	}
	return f
}

func fixedKey(kid string, seed byte) signing.PrivateKey {
	s := bytes.Repeat([]byte{seed}, ed25519.SeedSize)
	return signing.PrivateKey{KID: kid, Key: ed25519.NewKeyFromSeed(s)}
}

func (f *fixture) workerSources() grant.Sources {
	return grant.Sources{Policy: f.policy, Index: f.index, Card: f.worker, CardID: "runtime/dome-worker", CardRef: "runtime/dome-worker@test", CardDigest: "sha256:" + string(bytes.Repeat([]byte("cd"), 32))}
}

func (f *fixture) coordSources() grant.Sources {
	s := f.workerSources()
	s.Card, s.CardID, s.CardRef = f.coord, "runtime/dome-coordinator", "runtime/dome-coordinator@test"
	return s
}

// issue derives and issues the standard worker grant.
func (f *fixture) issue(t testing.TB, b grant.Binding) ([]byte, *grant.Grant) {
	t.Helper()
	d, err := grant.Derive(f.workerSources(), grant.Need{NodeID: "node-1", Capabilities: []string{"repo.read", "repo.propose"}, Role: grant.RoleWorker})
	if err != nil {
		t.Fatal(err)
	}
	if b.RunID == "" {
		b.RunID, b.WaveID, b.WorkerID, b.NodeExecutionID, b.Issuer, b.JTI = "run-1", "wave-1", "worker-7", "ne-1", "coordinator-1", "jti-0001"
	}
	if b.IssuedAt.IsZero() {
		b.IssuedAt = t0
	}
	tok, g, err := grant.Issue(d, b, f.key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok, g
}

// req is the verifier request that matches the standard grant.
func req(now time.Time) grant.Request {
	return grant.Request{Audience: "worker_runtime", RunID: "run-1", WaveID: "wave-1", WorkerID: "worker-7", NodeExecutionID: "ne-1", Now: now}
}
