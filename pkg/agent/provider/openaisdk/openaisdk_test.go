package openaisdk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/agent/provider"
)

// TestLinkedVersion_MatchesTheExampleRuntime: the SDK this module links is
// the one the example runtime pins (a bump of one without the other fails
// here, not in a user's run).
func TestLinkedVersion_MatchesTheExampleRuntime(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "registry", "agents", "runtimes", "openai.runtime.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rt provider.Runtime
	if err := json.Unmarshal(data, &rt); err != nil {
		t.Fatal(err)
	}
	if v := LinkedVersion(); v == "" || v != rt.SDK.Version {
		t.Fatalf("this module links openai-go %q; registry/agents/runtimes/openai.runtime.json pins %s", v, rt.SDK.Version)
	}
}

func TestNew_Refusals(t *testing.T) {
	ok := Settings{ID: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKey: "k", Timeout: time.Second, MaxResponseBytes: 1 << 20, SDKPin: "v3.96.0"}
	if _, err := New(ok, "v3.96.0"); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ok, ""); err != nil {
		t.Fatalf("no linked version to check against: %v", err)
	}
	for name, tc := range map[string]struct {
		mod    func(*Settings)
		linked string
		msg    string
	}{
		"pin":      {func(s *Settings) {}, "v3.95.0", "the runtime pins github.com/openai/openai-go/v3 v3.96.0 but dome-openai links v3.95.0"},
		"no key":   {func(s *Settings) { s.APIKey = "" }, "", "no API key"},
		"file URL": {func(s *Settings) { s.BaseURL = "file:///etc/passwd" }, "", "want http:// or https://"},
		"timeout":  {func(s *Settings) { s.Timeout = 0 }, "", "positive timeout"},
		"limit":    {func(s *Settings) { s.MaxResponseBytes = 0 }, "", "positive timeout and limit"},
	} {
		s := ok
		tc.mod(&s)
		if _, err := New(s, tc.linked); provider.CodeOf(err) != provider.CodeConfig || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
