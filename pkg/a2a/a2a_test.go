package a2a_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/a2a"
	"github.com/dome-registry/dome/pkg/schemaval"
)

func TestSchemasCompile(t *testing.T) {
	for _, n := range []string{a2a.SchemaCard, a2a.SchemaProfile} {
		b, err := a2a.SchemaBytes(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schemaval.Compile(n, b); err != nil {
			t.Fatal(err)
		}
	}
}

func TestShippedCardsAndProfiles(t *testing.T) {
	var s a2a.Schemas
	for _, kind := range []string{"runtime", "tool"} {
		files, _ := filepath.Glob(filepath.Join("../../registry/a2a/cards", kind, "*.card.json"))
		if len(files) < 3 {
			t.Fatalf("%s cards: %v", kind, files)
		}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			c, err := s.ParseCard(f, kind, b)
			if err != nil {
				t.Fatal(err)
			}
			if c.XDome.Kind != kind || len(c.SupportedInterfaces) == 0 {
				t.Errorf("%s: %+v", f, c.XDome)
			}
		}
	}
	files, _ := filepath.Glob("../../registry/a2a/profiles/*.profile.json")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		id := strings.TrimSuffix(filepath.Base(f), ".profile.json")
		p, err := s.ParseProfile(f, id, b)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := a2a.CardKindID(p.Card); !ok {
			t.Errorf("%s: card %q", f, p.Card)
		}
	}
}

func TestParseCard_Refusals(t *testing.T) {
	good, _ := os.ReadFile("../../registry/a2a/cards/runtime/dome-worker.card.json")
	cases := []struct{ name, from, to, want string }{
		{"v0.3 url", `"name": "dome worker",`, `"name": "dome worker", "url": "https://x",`, "/url: not an A2A v1.0 AgentCard member"},
		{"v0.3 preferredTransport", `"name": "dome worker",`, `"name": "dome worker", "preferredTransport": "JSONRPC",`, "/preferredTransport"},
		{"v0.3 protocolVersion", `"name": "dome worker",`, `"name": "dome worker", "protocolVersion": "0.3.0",`, "/protocolVersion: not an A2A v1.0"},
		{"kind mismatch", `"kind": "runtime"`, `"kind": "tool"`, "/x-dome/kind"},
		{"unknown class", `"max_classes": [`, `"max_classes": ["root", `, "/x-dome/max_classes/0"},
		{"duplicate skill", `"id": "patch-proposal"`, `"id": "repo-read"`, "skill id \"repo-read\" is listed twice"},
		{"undeclared scheme", `"schemes": {
        "dome_grant"`, `"schemes": {
        "nope"`, "security scheme \"nope\" is not declared"},
		{"duplicate key", `"version": "1.0.0",`, `"version": "1.0.0", "version": "2.0.0",`, "duplicate"},
		{"unknown member", `"version": "1.0.0",`, `"version": "1.0.0", "Version": "2",`, "Version"},
		{"no interfaces", `"supportedInterfaces": [`, `"supportedInterfaces": [], "x": [`, "supportedInterfaces"},
	}
	var s a2a.Schemas
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(good), c.from) {
				t.Fatalf("fixture lacks %q", c.from)
			}
			_, err := s.ParseCard("dome-worker.card.json", "runtime", []byte(strings.Replace(string(good), c.from, c.to, 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestParseProfile_Refusals(t *testing.T) {
	good, _ := os.ReadFile("../../registry/a2a/profiles/patch-worker.profile.json")
	cases := []struct{ name, from, to, want string }{
		{"id mismatch", `"id": "patch-worker"`, `"id": "other"`, "does not match the file name"},
		{"bad card ref", `"card": "runtime/dome-worker"`, `"card": "dome-worker"`, "/card"},
		{"bad selector", `"capabilities": [`, `"view": {"deny": ["grep"]}, "capabilities": [`, "/view/deny/0"},
		{"negative budget", `"max_calls": 200`, `"max_calls": -1`, "/constraints/budgets/max_calls"},
	}
	var s a2a.Schemas
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(good), c.from) {
				t.Fatalf("fixture lacks %q", c.from)
			}
			_, err := s.ParseProfile("patch-worker.profile.json", "patch-worker", []byte(strings.Replace(string(good), c.from, c.to, 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func FuzzParseCard(f *testing.F) {
	b, _ := os.ReadFile("../../registry/a2a/cards/runtime/dome-worker.card.json")
	f.Add(b)
	f.Add([]byte(`{"name":"x"}`))
	var s a2a.Schemas
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := s.ParseCard("f", "", data)
		if err == nil && (len(c.Skills) == 0 || len(c.XDome.Capabilities) == 0 || len(c.SupportedInterfaces) == 0) {
			t.Fatalf("accepted a card without skills, capabilities or interfaces: %s", data)
		}
	})
}

func FuzzParseProfile(f *testing.F) {
	b, _ := os.ReadFile("../../registry/a2a/profiles/patch-worker.profile.json")
	f.Add(b)
	var s a2a.Schemas
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := s.ParseProfile("f", "", data)
		if err == nil && len(p.Capabilities) == 0 {
			t.Fatalf("accepted a profile without capabilities: %s", data)
		}
	})
}
