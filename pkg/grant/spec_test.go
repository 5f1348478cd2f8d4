package grant_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/schemaval"
)

func TestSchemasMatchRegistry(t *testing.T) {
	for _, name := range []string{grant.SchemaPolicySpec, grant.SchemaResolverSpec} {
		b, err := grant.SchemaBytes(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schemaval.Compile(name, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, readFile(t, "../registry/schemas/"+name)) {
			t.Errorf("%s differs from pkg/registry/schemas/%s: keep them identical", name, name)
		}
	}
}

func TestParsePolicy_Refusals(t *testing.T) {
	good := string(readFile(t, "../../policy/policy_spec.json"))
	cases := []struct{ name, from, to, field string }{
		{"default over max", `"default_ttl_seconds": 900`, `"default_ttl_seconds": 7200`, "/grants/default_ttl_seconds"},
		{"admin for workers", `"admin": {"holders": ["coordinator"]`, `"admin": {"holders": ["coordinator", "worker"]`, "/classes/admin/holders"},
		{"write without idempotency", `"write": {"holders": ["worker", "coordinator"], "requires_idempotency_key": true`, `"write": {"holders": ["worker", "coordinator"], "requires_idempotency_key": false`, "/classes/write/requires_idempotency_key"},
		{"coordinator audience for planners", `"coordinator": {"holders": ["coordinator"], "description"`, `"coordinator": {"holders": ["coordinator", "planner"], "description"`, "/grants/audiences/coordinator/holders"},
		{"dirty root", `"read_roots": ["."]`, `"read_roots": ["./src"]`, "/defaults/io/read_roots/0"},
		{"escaping root", `"read_roots": ["."]`, `"read_roots": ["../x"]`, "/defaults/io/read_roots/0"},
		{"bad glob", `"**/.env"]`, `"[a"]`, "/defaults/io/deny_globs/3"},
		{"bad host", `"allow_hosts": []`, `"allow_hosts": ["https://x.example.com/"]`, "/defaults/net/allow_hosts/0"},
		{"unknown field", `"single_use_for_write": true`, `"single_use_for_write": true, "singleuse": 1`, "/grants"},
		{"duplicate key", `"max_ttl_seconds": 3600`, `"max_ttl_seconds": 3600, "max_ttl_seconds": 60`, "max_ttl_seconds"},
	}
	var s grant.Specs
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.from) {
				t.Fatalf("fixture lacks %s", c.from)
			}
			_, err := s.ParsePolicy("policy/policy_spec.json", []byte(strings.Replace(good, c.from, c.to, 1)))
			if grant.CodeOf(err) != grant.CodeBadPolicy || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), "policy/policy_spec.json") {
				t.Fatalf("err = %v, want BAD_POLICY naming %s", err, c.field)
			}
		})
	}
}

func TestParseResolver_Refusals(t *testing.T) {
	good := string(readFile(t, "../../policy/resolver_spec.json"))
	cases := []struct{ name, from, to, field string }{
		{"read capability with write roots", `"constraints_template": {"io": {"read_roots": ["."], "deny_globs"`, `"constraints_template": {"io": {"read_roots": ["."], "write_roots": ["x"], "deny_globs"`, "/capabilities/repo.read/constraints_template/io/write_roots"},
		{"both ids and families", `"families": ["repo.read"],`, `"families": ["repo.read"], "operation_ids": ["read_file"],`, "/capabilities/repo.read"},
		{"bad class", `"class": "admin", "tool": "repo-admin"`, `"class": "root", "tool": "repo-admin"`, "/capabilities/repo.integrate/class"},
		{"bad capability name", `"repo.read": {`, `"Repo Read": {`, "/capabilities"},
	}
	var s grant.Specs
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.from) {
				t.Fatalf("fixture lacks %s", c.from)
			}
			_, err := s.ParseResolver("policy/resolver_spec.json", []byte(strings.Replace(good, c.from, c.to, 1)))
			if grant.CodeOf(err) != grant.CodeBadResolver || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("err = %v, want BAD_RESOLVER naming %s", err, c.field)
			}
		})
	}
	// Checked against the contracts.
	idx := []struct{ name, from, to, want string }{
		{"unknown operation", `"listPets", "showPetById"`, `"listPets", "showPet"`, `/capabilities/pets.read/operation_ids/1: petstore has no operation "showPet"`},
		{"unknown family", `"families": ["repo.read"]`, `"families": ["repo.reads"]`, `/capabilities/repo.read/families/0`},
		{"unknown tool", `"tool": "inventory",
      "description": "record`, `"tool": "stock",
      "description": "record`, `/capabilities/inventory.move/tool: tool "stock"`},
		{"read capability maps a write", `"operation_ids": ["listPets", "showPetById", "getOrder"]`, `"operation_ids": ["listPets", "showPetById", "getOrder", "createPet"]`, "read capability maps petstore/createPet, a write operation (inferred from its HTTP method)"},
		{"write capability maps admin", `"operation_ids": ["createPet", "updatePet", "placeOrder"]`, `"operation_ids": ["createPet", "updatePet", "placeOrder", "deletePet"]`, "petstore/deletePet, an admin operation"},
		{"family of another tool", `"class": "read", "tool": "repo-read"`, `"class": "read", "tool": "patch-proposal"`, "families/0"},
	}
	for _, c := range idx {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.from) {
				t.Fatalf("fixture lacks %s", c.from)
			}
			r, err := s.ParseResolver("policy/resolver_spec.json", []byte(strings.Replace(good, c.from, c.to, 1)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = grant.NewIndex(r, testCatalog())
			if grant.CodeOf(err) != grant.CodeBadResolver || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}
