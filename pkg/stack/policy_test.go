package stack

import (
	"os"
	"strings"
	"testing"
)

func TestDefaultPolicy_MatchesRepositoryPolicy(t *testing.T) {
	DefaultPolicy()
	repo, err := os.ReadFile("../../policy/stack_policy.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(repo) != string(DefaultPolicyJSON()) {
		t.Fatal("pkg/stack/default_stack_policy.json differs from policy/stack_policy.json: copy it")
	}
}

func TestParsePolicy_Errors(t *testing.T) {
	base := string(DefaultPolicyJSON())
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"unknown member", `"version": "1",`, `"version": "1", "surprise": true,`, "surprise"},
		{"bad mode", `"mode": "gated"`, `"mode": "sometimes"`, "/dependency_files/mode"},
		{"bad glob", `"secrets/**"`, `"secrets/[**"`, "/forbidden_paths/8"},
		{"undefined tier", `"high": ["fast", "full"]}`, `"high": ["fast", "slow"]}`, `tier "slow" is not defined`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(base, tc.from, tc.to, 1)
			if doc == base {
				t.Fatalf("replacement %q not found", tc.from)
			}
			_, err := ParsePolicy("p.json", []byte(doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
