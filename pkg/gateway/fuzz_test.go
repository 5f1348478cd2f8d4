package gateway_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/gateway"
)

// FuzzHandler sends hostile requests to every operation of a session: the
// answer is always 200 with a JSON object, or an error of the taxonomy
// with its status.
func FuzzHandler(f *testing.F) {
	fx := runtest.New(f, runtest.Options{})
	a := fx.Attempt("docs", 1)
	tok := fx.Issue(a, runtest.IssueOptions{NotSingle: true, MaxCalls: 1_000_000})
	s, err := fx.GW.Open(a, nil)
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	ops := []string{"/read_file", "/list_tree", "/grep", "/get_base_ref", "/get_diff_stats", "/submit_patch", "/submit_metadata", "/nope"}
	for _, seed := range []string{`{"path":"README.md"}`, `{"path":"greet","recursive":true}`, `{"pattern":"Hello","paths":["greet"]}`, `{}`,
		`{"to_ref":"` + fx.Base + `"}`, `{"path":"README.md","path":"x"}`, `{"path":"../etc/passwd"}`, `{"pattern":"(a*)*b"}`,
		`{"idempotency_key":"ne-docs-1:k","node_execution_id":"ne-docs-1","proposal":{}}`, `[`, "\xff", `{"path":"\ud800"}`} {
		for op := range ops {
			f.Add(uint8(op), []byte(seed), true)
		}
	}
	codes := map[int]map[string]bool{
		400: {gateway.CodeInvalidArgument: true}, 401: {gateway.CodeUnauthenticated: true}, 403: {gateway.CodePermissionDenied: true},
		404: {gateway.CodeNotFound: true}, 405: {gateway.CodeInvalidArgument: true}, 409: {gateway.CodeConflict: true, gateway.CodeIdempotencyConflict: true},
		413: {gateway.CodePayloadTooLarge: true}, 429: {gateway.CodeBudgetExhausted: true}, 503: {gateway.CodeUnavailable: true},
	}
	f.Fuzz(func(t *testing.T, op uint8, body []byte, withGrant bool) {
		r := httptest.NewRequest(http.MethodPost, ops[int(op)%len(ops)], bytes.NewReader(body))
		if withGrant {
			r.Header.Set("Authorization", "Bearer "+string(tok))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == http.StatusOK {
			var v map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
				t.Fatalf("200 with a body that is not a JSON object: %q", w.Body.Bytes())
			}
			return
		}
		var eb gateway.ErrorBody
		if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil {
			t.Fatalf("%d with a body outside the taxonomy: %q", w.Code, w.Body.Bytes())
		}
		if !codes[w.Code][eb.Error.Code] {
			t.Fatalf("status %d with code %q: %s", w.Code, eb.Error.Code, w.Body.Bytes())
		}
	})
}
