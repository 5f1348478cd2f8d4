package provider

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// FuzzHelperError: whatever dome-openai prints when it fails is a provider
// error with one of the codes it may give, or not an error answer at all.
func FuzzHelperError(f *testing.F) {
	for _, s := range []string{`{"error":{"code":"PROVIDER_HTTP_ERROR","message":"HTTP 401","status":401}}`, `{"error":{"code":"MODEL_NOT_ALLOWED","message":"x"}}`,
		`{"error":null}`, `{"error":{"code":"PROVIDER_TIMEOUT","message":"` + strings.Repeat("x", 2000) + `"}}`, "\xff", `{}`} {
		f.Add([]byte(s))
	}
	p := &execProvider{rt: &Runtime{ID: "t"}, argv: []string{"dome-openai"}, kind: "openai"}
	f.Fuzz(func(t *testing.T, out []byte) {
		err := p.decodeError(out)
		if err == nil {
			return
		}
		var pe *Error
		if !errors.As(err, &pe) || !errorCodes[pe.Code] || len(pe.Message) > 1003 {
			t.Fatalf("%v", err)
		}
	})
}
