package grant_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/grant"
)

// FuzzParse checks the grant reader against a slow, obviously strict one:
// whatever Parse accepts is canonical JSON that encoding/json decodes, with
// no unknown member, to the same header and payload.
func FuzzParse(f *testing.F) {
	fx := newFixture(f)
	tok, _ := fx.issue(f, grant.Binding{})
	f.Add(tok)
	f.Add(bytes.Replace(tok, []byte(`"single_use":true`), []byte(`"single_use":false`), 1))
	f.Add([]byte(`{"header":{},"payload":{}}`))
	f.Add([]byte(`{"header":{"a":"\\\""}}`))
	v, _ := grant.NewVerifier(fx.trusted, grant.Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := grant.Parse(data)
		// Verify never panics, whatever the bytes.
		v.Check(data, grant.Request{Audience: "worker_runtime", RunID: "run-1", WaveID: "wave-1", Now: time.Unix(1767323045, 0)})
		if err != nil {
			if grant.CodeOf(err) == "" {
				t.Fatalf("an error without a code: %v", err)
			}
			return
		}
		c, err := canonical.Transform(data)
		if err != nil || !bytes.Equal(c, data) {
			t.Fatalf("Parse accepted non-canonical bytes: %q (%v)", data, err)
		}
		var slow struct {
			Header  artifact.Header `json:"header"`
			Payload grant.Payload   `json:"payload"`
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&slow); err != nil {
			t.Fatalf("Parse accepted what encoding/json refuses: %v\n%s", err, data)
		}
		if !reflect.DeepEqual(slow.Header, g.Header) {
			t.Fatalf("header differs:\n%+v\n%+v", slow.Header, g.Header)
		}
		if !reflect.DeepEqual(normalize(slow.Payload), normalize(g.Payload)) {
			t.Fatalf("payload differs:\n%+v\n%+v", slow.Payload, g.Payload)
		}
		// And it re-encodes to the same bytes (no member spelled another way).
		again, err := canonical.Marshal(slow)
		if err == nil && !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs:\n%s\n%s", again, data)
		}
	})
}

func normalize(p grant.Payload) grant.Payload {
	if p.Budgets.MaxCallsByCapability == nil {
		p.Budgets.MaxCallsByCapability = map[string]int64{}
	}
	return p
}

func FuzzParsePolicy(f *testing.F) {
	f.Add(readFile(f, "../../policy/policy_spec.json"))
	f.Add([]byte(`{"schema_version":"dome.policy_spec/v1"}`))
	var s grant.Specs
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := s.ParsePolicy("p.json", data)
		if err != nil {
			if grant.CodeOf(err) != grant.CodeBadPolicy {
				t.Fatalf("error without BAD_POLICY: %v", err)
			}
			return
		}
		if p.Grants.DefaultTTLSeconds > p.Grants.MaxTTLSeconds || p.Defaults.Budgets == nil {
			t.Fatalf("accepted an invalid policy: %s", data)
		}
		for _, h := range p.Classes[grant.ClassAdmin].Holders {
			if h != grant.RoleCoordinator {
				t.Fatalf("accepted admin for %s", h)
			}
		}
	})
}

func FuzzParseResolver(f *testing.F) {
	f.Add(readFile(f, "../../policy/resolver_spec.json"))
	f.Add([]byte(`{"schema_version":"dome.resolver_spec/v1","capabilities":{"a":{"class":"read","tool":"t","families":["x"]}}}`))
	var s grant.Specs
	cat := testCatalog()
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := s.ParseResolver("r.json", data)
		if err != nil {
			if grant.CodeOf(err) != grant.CodeBadResolver {
				t.Fatalf("error without BAD_RESOLVER: %v", err)
			}
			return
		}
		if _, err := grant.NewIndex(r, cat); err != nil && grant.CodeOf(err) != grant.CodeBadResolver {
			t.Fatalf("index error without BAD_RESOLVER: %v", err)
		}
	})
}
