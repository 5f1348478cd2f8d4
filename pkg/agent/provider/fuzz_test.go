package provider

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzParseRuntime(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "registry", "agents", "runtimes", "*.runtime.json"))
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	s := CompileRuntimeSchema()
	f.Fuzz(func(t *testing.T, data []byte) {
		rt, err := ParseRuntime("x.runtime.json", data, s)
		if err == nil && (rt.ID == "" || len(rt.Models) == 0 || rt.TimeoutSeconds < 1) {
			t.Fatalf("an invalid runtime parsed: %+v", rt)
		}
	})
}

// FuzzExecResponse: whatever a command prints is a response or a
// PROVIDER_BAD_RESPONSE, never a panic.
func FuzzExecResponse(f *testing.F) {
	for _, s := range []string{`{"text":"x"}`, `{"text":"x","usage":{"promptTokens":1,"completionTokens":2}}`, `garbage`, `{"text":null}`, "\xff"} {
		f.Add([]byte(s))
	}
	p := &execProvider{rt: &Runtime{ID: "t"}, argv: []string{"model"}}
	f.Fuzz(func(t *testing.T, out []byte) {
		_, err := p.decode(out)
		if err != nil && CodeOf(err) != CodeBadResponse {
			t.Fatalf("%v", err)
		}
	})
}
