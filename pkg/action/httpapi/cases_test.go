package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/httpapi"
	"github.com/dome-registry/dome/pkg/signing"
)

// TestContractCases_AreWhatTheServerAnswers replays the golden contract-test
// cases of registry/tools/action-registry against the real handler over the
// example actions of registry/actions (trusted with the repository's
// dev-only key): the cases, the OpenAPI description and the server agree.
func TestContractCases_AreWhatTheServerAnswers(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	tk, err := os.ReadFile(filepath.Join(root, "examples", "actions", "keys", "dev-only-insecure-1.trusted.json"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := signing.ParseTrustedKeys(tk)
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "registry", "actions", "*", "*.json"))
	if len(docs) == 0 {
		t.Fatal("no example actions")
	}
	cases, _ := filepath.Glob(filepath.Join(root, "registry", "tools", "action-registry", "contract-tests", "cases", "*.json"))
	if len(cases) < 6 {
		t.Fatalf("cases: %v", cases)
	}
	for _, file := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			var c struct {
				OperationID string `json:"operation_id"`
				Request     struct {
					PathParams map[string]string `json:"path_params"`
					Headers    map[string]string `json:"headers"`
					Body       json.RawMessage   `json:"body"`
				} `json:"request"`
				Response struct {
					Status  int               `json:"status"`
					Headers map[string]string `json:"headers"`
					Body    json.RawMessage   `json:"body"`
				} `json:"response"`
			}
			b, _ := os.ReadFile(file)
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			method, path := "GET", ""
			switch c.OperationID {
			case "listActions":
				path = "/actions"
			case "getActionVersion", "publishActionVersion":
				path = "/actions/" + c.Request.PathParams["name"] + "/versions/" + c.Request.PathParams["version"]
				if c.OperationID == "publishActionVersion" {
					method = "POST"
				}
			case "verifyActionVersion":
				path = "/actions/" + c.Request.PathParams["name"] + "/versions/" + c.Request.PathParams["version"] + "/verify"
			case "getHealth":
				path = "/healthz"
			case "getReadiness":
				path = "/readyz"
			default:
				t.Fatalf("no route for %s", c.OperationID)
			}
			s := newMemStore()
			for _, d := range docs {
				raw, _ := os.ReadFile(d)
				rec, err := action.Prepare(raw)
				if err != nil {
					t.Fatal(err)
				}
				if method == "POST" && path == "/actions/"+rec.Name+"/versions/"+rec.Version {
					continue // the case publishes it
				}
				s.Publish(context.Background(), rec)
			}
			e := newAPIEnv(t, s, httpapi.Options{Keys: keys, APIKey: c.Request.Headers["X-API-Key"]})
			var body []byte
			if len(c.Request.Body) > 0 {
				body = c.Request.Body
			}
			r := e.do(method, path, body, c.Request.Headers)
			if r.status != c.Response.Status {
				t.Fatalf("%s %s: %d, the case says %d\n%s", method, path, r.status, c.Response.Status, r.body)
			}
			var got, want any
			json.Unmarshal(r.body, &got)
			json.Unmarshal(c.Response.Body, &want)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("%s %s body:\n got  %s\n case %s", method, path, g, w)
			}
			for k, v := range c.Response.Headers {
				if r.header.Get(k) != v {
					t.Errorf("header %s: %q, the case says %q", k, r.header.Get(k), v)
				}
			}
			if !bytes.HasSuffix(r.body, []byte("\n")) {
				t.Errorf("body without a final newline")
			}
		})
	}
}
