package skill_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/skill"
	"github.com/dome-registry/dome/pkg/specfilter"
)

func load(t *testing.T, tool string) *specfilter.Document {
	t.Helper()
	dir, err := specfilter.OpenDir(filepath.Join("../../registry/tools", tool))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	doc, err := specfilter.Load(dir, "spec/openapi.yaml", specfilter.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestShippedSkillContracts(t *testing.T) {
	want := map[string]string{
		"repo-read":      "get_base_ref:read:none get_diff_stats:read:none grep:read:none list_tree:read:none read_file:read:none",
		"patch-proposal": "submit_metadata:write:proposal_register submit_patch:write:artifact_put",
		"repo-admin":     "apply_patch:admin:artifact_put checkpoint:admin:artifact_put create_integration_worktree:admin:artifact_put promote:admin:artifact_put rollback:admin:artifact_put run_validation:admin:artifact_put",
	}
	for tool, w := range want {
		doc := load(t, tool)
		if ps := skill.Check(doc); len(ps) > 0 {
			t.Errorf("%s: %v", tool, ps)
		}
		c, err := skill.FromDocument(tool, "", tool, doc)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range c.Operations {
			got = append(got, o.ID+":"+string(o.Class)+":"+o.SideEffect)
			if o.Class.Mutates() != o.IdempotencyKey || !o.Declared {
				t.Errorf("%s/%s: idempotency %v, declared %v", tool, o.ID, o.IdempotencyKey, o.Declared)
			}
		}
		if strings.Join(got, " ") != w || !c.Skill || c.Version != "1.0.0" {
			t.Errorf("%s: %s", tool, strings.Join(got, " "))
		}
		// One taxonomy: every skill tool ships the same Error.json bytes.
		b, _ := os.ReadFile(filepath.Join("../../registry/tools", tool, "spec/schemas/Error.json"))
		cb, _ := canonical.Transform(b)
		if !bytes.Equal(cb, skill.ErrorTaxonomy()) {
			t.Errorf("%s: spec/schemas/Error.json differs from pkg/skill/error_taxonomy.json", tool)
		}
	}
	// A plain tool: classes inferred from HTTP methods.
	c, err := skill.FromDocument("petstore", "", "petstore", load(t, "petstore"))
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]grant.Class{}
	for _, o := range c.Operations {
		classes[o.ID] = o.Class
	}
	if c.Skill || classes["listPets"] != grant.ClassRead || classes["createPet"] != grant.ClassWrite || classes["deletePet"] != grant.ClassAdmin {
		t.Errorf("petstore: %v", classes)
	}
}

func TestCheck_BrokenContracts(t *testing.T) {
	base := string(mustRead(t, "../../registry/tools/patch-proposal/spec/openapi.yaml"))
	taxonomy := mustRead(t, "../../registry/tools/patch-proposal/spec/schemas/Error.json")
	cases := []struct{ name, from, to, want string }{
		{"no class", "x-dome-class: write\n      x-dome-side-effect: artifact_put", "x-dome-side-effect: artifact_put", "x-dome-class"},
		{"bad class", "x-dome-class: write\n      x-dome-side-effect: artifact_put", "x-dome-class: root\n      x-dome-side-effect: artifact_put", "want read, write or admin"},
		{"write without side effect", "x-dome-side-effect: artifact_put", "x-dome-side-effect: none", "changes something"},
		{"write without key", "x-dome-idempotency: {required: true, key: idempotency_key, dedupe_by: [method, idempotency_key, run_id]}\n      requestBody:\n        required: true\n        content:\n          application/json:\n            schema:\n              $ref: '#/components/schemas/SubmitPatchRequest'", "x-dome-idempotency: {required: false}\n      requestBody:\n        required: true\n        content:\n          application/json:\n            schema:\n              $ref: '#/components/schemas/SubmitPatchRequest'", "requires an idempotency_key"},
		{"body without the key", "      required: [idempotency_key, node_execution_id, proposal]", "      required: [node_execution_id, proposal]", `must require "idempotency_key"`},
		{"write without node execution", "      required: [idempotency_key, node_execution_id, proposal]", "      required: [idempotency_key, proposal]", `must require "node_execution_id"`},
		{"own error schema", "$ref: 'schemas/Error.json'", "{type: object}", "shared taxonomy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(base, c.from) {
				t.Fatalf("fixture lacks %q", c.from)
			}
			spec := strings.Replace(base, c.from, c.to, 1)
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "spec/schemas"), 0o755)
			os.WriteFile(filepath.Join(dir, "spec/openapi.yaml"), []byte(spec), 0o644)
			os.WriteFile(filepath.Join(dir, "spec/schemas/Error.json"), taxonomy, 0o644)
			fr, _ := specfilter.OpenDir(dir)
			defer fr.Close()
			doc, err := specfilter.Load(fr, "spec/openapi.yaml", specfilter.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = skill.FromDocument("patch-proposal", "", "spec", doc)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The shipped resolver spec resolves against the shipped tools.
func TestShippedResolverResolves(t *testing.T) {
	var specs grant.Specs
	r, err := specs.ParseResolver("policy/resolver_spec.json", mustRead(t, "../../policy/resolver_spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	cat := &grant.Catalog{Contracts: map[string]*grant.Contract{}}
	for _, id := range r.IDs() {
		tool := r.Capabilities[id].Tool
		if cat.Contracts[tool] != nil {
			continue
		}
		c, err := skill.FromDocument(tool, "", tool, load(t, tool))
		if err != nil {
			t.Fatal(err)
		}
		cat.Contracts[tool] = c
	}
	if _, err := grant.NewIndex(r, cat); err != nil {
		t.Fatal(err)
	}
}
