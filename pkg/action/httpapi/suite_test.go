package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/httpapi"
	"github.com/dome-registry/dome/pkg/action/storetest"
	"github.com/dome-registry/dome/pkg/canonical"
)

const apiKey = "test-publish-key"

// storeKit is what the suite needs from a backend: a fresh empty store, and
// a way to change a stored document's bytes behind the store's back (the
// seed's tamper test: an edited file, an UPDATE).
type storeKit struct {
	open   func(t testing.TB) action.Store
	tamper func(t testing.TB, s action.Store, name, version string, edit func([]byte) []byte)
	// watch runs the handler's Watch (the store reports changes) and waits
	// until it watches.
	watch bool
}

// apiEnv is one server over one store.
type apiEnv struct {
	t     *testing.T
	store action.Store
	h     *httpapi.Handler
	srv   *httptest.Server
	spec  *apiSpec
	form  bodyForm // how publish sends a signed document
}

// bodyForm is one shape of the publish request body: the signed document
// itself, or the envelope {"schema", "signature"} the API also accepts.
type bodyForm struct {
	name string
	body func(t testing.TB, signed []byte) []byte
}

var bodyForms = []bodyForm{
	{"document", func(_ testing.TB, signed []byte) []byte { return signed }},
	{"envelope", envelopeBody},
}

// envelopeBody turns a signed document into {"schema": payload, "signature"}.
func envelopeBody(t testing.TB, signed []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(signed, &m); err != nil {
		t.Fatal(err)
	}
	env := map[string]json.RawMessage{"signature": m["signature"]}
	delete(m, "signature")
	delete(m, "hash")
	schema, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	env["schema"] = schema
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newAPIEnv(t *testing.T, s action.Store, opts httpapi.Options) *apiEnv {
	t.Helper()
	_, keys := storetest.Key(t)
	opts.Store = s
	if opts.Keys == nil {
		opts.Keys = keys
	}
	h, err := httpapi.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &apiEnv{t: t, store: s, h: h, srv: srv, spec: spec(t), form: bodyForms[0]}
}

// watch runs the handler's Watch until t ends and waits until it watches.
func (e *apiEnv) watch() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.h.Watch(ctx); close(done) }()
	e.t.Cleanup(func() { cancel(); <-done })
	if !waitFor(10*time.Second, e.h.Watching) {
		e.t.Fatal("the handler does not watch the store after 10 s")
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value.
func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	v, err := decodeJSON(r.body)
	if err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.body)
	}
	m, _ := v.(map[string]any)
	return m
}

// code returns error.code of an error body ("" when there is none).
func (r response) code() string {
	var b struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(r.body, &b)
	return b.Error.Code
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// do sends a request and checks the response against the OpenAPI
// description.
func (e *apiEnv) do(method, path string, body []byte, hdr map[string]string) response {
	e.t.Helper()
	return doRequest(e.t, e.srv.Client(), e.spec, e.srv.URL, method, path, body, hdr)
}

func doRequest(t testing.TB, c *http.Client, sp *apiSpec, base, method, path string, body []byte, hdr map[string]string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		switch {
		case v == "": // "": send no such header
			req.Header.Del(k)
		case strings.Contains(v, "\n"): // one header line per value
			req.Header[http.CanonicalHeaderKey(k)] = strings.Split(v, "\n")
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if sp != nil {
		sp.checkResponse(t, method, path, resp.StatusCode, resp.Header, b)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// publish sends a signed document in the env's body form.
func (e *apiEnv) publish(doc []byte) response {
	e.t.Helper()
	var d struct{ Name, Version string }
	json.Unmarshal(doc, &d)
	return e.do("POST", "/actions/"+d.Name+"/versions/"+d.Version, e.form.body(e.t, doc), map[string]string{"X-API-Key": apiKey})
}

func (e *apiEnv) mustPublish(doc []byte, want int) response {
	e.t.Helper()
	r := e.publish(doc)
	if r.status != want {
		e.t.Fatalf("publish: %d, want %d\n%s", r.status, want, r.body)
	}
	return r
}

// signed returns an action document signed with the suite's key; extra
// members are added to the payload.
func signed(t testing.TB, name, version, description string, extra map[string]any) []byte {
	t.Helper()
	doc := map[string]any{
		"name": name, "version": version, "description": description,
		"input": map[string]any{"type": "object", "required": []string{"path"}, "properties": map[string]any{"path": map[string]any{"type": "string"}}},
	}
	for k, v := range extra {
		doc[k] = v
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := storetest.Key(t)
	out, err := action.Sign(key, raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wantStatus(t testing.TB, what string, r response, status int, code string) {
	t.Helper()
	if r.status != status || r.code() != code {
		t.Errorf("%s: %d %s, want %d %s\n%s", what, r.status, r.code(), status, code, r.body)
	}
}

// runSuite runs the acceptance tests A to F of the action registry and the
// publish rules over HTTP against one backend, once with each publish body
// form (the signed document, the {"schema", "signature"} envelope), then the
// tests that do not depend on the body form.
func runSuite(t *testing.T, kit storeKit) {
	for _, form := range bodyForms {
		t.Run(form.name, func(t *testing.T) {
			runAcceptance(t, kit, func(t *testing.T) *apiEnv {
				e := newAPIEnv(t, kit.open(t), httpapi.Options{APIKey: apiKey})
				e.form = form
				if kit.watch {
					e.watch()
				}
				return e
			})
		})
	}
	runStoreBehaviour(t, kit, func(t *testing.T) *apiEnv {
		e := newAPIEnv(t, kit.open(t), httpapi.Options{APIKey: apiKey})
		if kit.watch {
			e.watch()
		}
		return e
	})
}

// reorderedJSON writes the same JSON object with its members (at every
// level) in reverse order and other whitespace.
func reorderedJSON(t testing.TB, b []byte) []byte {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var write func(v any, indent string)
	write = func(v any, indent string) {
		m, ok := v.(map[string]any)
		if !ok {
			enc, _ := json.Marshal(v)
			out.Write(enc)
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		out.WriteString("{\n")
		for i, k := range keys {
			fmt.Fprintf(&out, "%s  %q :  ", indent, k)
			write(m[k], indent+"    ")
			if i < len(keys)-1 {
				out.WriteString(",\n")
			}
		}
		out.WriteString("\n" + indent + "}")
	}
	write(v, "")
	out.WriteString("\n")
	return []byte(out.String())
}

// runAcceptance is A to F and the publish refusals in env's body form.
func runAcceptance(t *testing.T, kit storeKit, env func(t *testing.T) *apiEnv) {
	t.Run("A_CanonicalizationDeterminism", func(t *testing.T) {
		e := env(t)
		doc := signed(t, "files.move", "1.0.0", "Move a file", nil)
		var m map[string]any
		json.Unmarshal(doc, &m)
		// The same body, keys in another order, other whitespace.
		body := e.form.body(t, doc)
		reordered := reorderedJSON(t, body)
		c1, _ := canonical.Transform(body)
		c2, _ := canonical.Transform(reordered)
		if !bytes.Equal(c1, c2) || bytes.Equal(body, reordered) {
			t.Fatalf("canonical bytes differ:\n%s\n%s", c1, c2)
		}
		path := "/actions/files.move/versions/1.0.0"
		r := e.do("POST", path, reordered, map[string]string{"X-API-Key": apiKey})
		if r.status != http.StatusCreated {
			t.Fatalf("publish: %d\n%s", r.status, r.body)
		}
		r1 := r.json(t)
		r2 := e.mustPublish(doc, http.StatusOK).json(t) // the same canonical bytes: an idempotent republish
		if r1["hash"] != r2["hash"] || r1["hash"] != m["hash"] {
			t.Errorf("hashes differ: %v %v %v", r1["hash"], r2["hash"], m["hash"])
		}
		got := e.do("GET", "/actions/files.move/versions/1.0.0", nil, nil).json(t)
		if got["hash"] != m["hash"] || got["verified"] != true {
			t.Errorf("GET: %v", got)
		}
	})

	t.Run("B_SignatureVerifies", func(t *testing.T) {
		e := env(t)
		doc := signed(t, "files.move", "1.1.0", "Move a file", nil)
		r := e.mustPublish(doc, http.StatusCreated)
		if loc := r.header.Get("Location"); loc != "/actions/files.move/versions/1.1.0" {
			t.Errorf("Location %q", loc)
		}
		got := e.do("GET", "/actions/files.move/versions/1.1.0", nil, nil)
		m := got.json(t)
		if got.status != 200 || m["verified"] != true || m["name"] != "files.move" || m["version"] != "1.1.0" {
			t.Fatalf("GET: %d %s", got.status, got.body)
		}
		if _, ok := m["reason"]; ok {
			t.Errorf("a verified version has a reason: %s", got.body)
		}
		var pub map[string]any
		json.Unmarshal(doc, &pub)
		sig := m["signature"].(map[string]any)
		if m["hash"] != pub["hash"] || sig["kid"] != storetest.KID || sig["alg"] != "ed25519" {
			t.Errorf("GET: %s", got.body)
		}
		schema := m["schema"].(map[string]any)
		if _, ok := schema["hash"]; ok || schema["description"] != "Move a file" || schema["input"] == nil {
			t.Errorf("schema is not the signed payload: %v", schema)
		}
		v := e.do("GET", "/actions/files.move/versions/1.1.0/verify", nil, nil).json(t)
		if v["verified"] != true || v["kid"] != storetest.KID || v["alg"] != "ed25519" || v["hash"] != pub["hash"] {
			t.Errorf("verify: %v", v)
		}
	})

	t.Run("C_TamperDetection", func(t *testing.T) {
		e := env(t)
		e.mustPublish(signed(t, "files.move", "1.0.0", "Move a file", nil), http.StatusCreated)
		e.mustPublish(signed(t, "files.copy", "1.0.0", "Copy a file", nil), http.StatusCreated)
		// Verified once, so the result is cached: the tamper must still show.
		if m := e.do("GET", "/actions/files.move/versions/1.0.0", nil, nil).json(t); m["verified"] != true {
			t.Fatalf("before the tamper: %v", m)
		}
		kit.tamper(t, e.store, "files.move", "1.0.0", func(doc []byte) []byte {
			return bytes.Replace(doc, []byte("Move a file"), []byte("Move a filE"), 1)
		})
		got := e.do("GET", "/actions/files.move/versions/1.0.0", nil, nil)
		if kit.watch { // the change shows once its notification arrives
			waitFor(5*time.Second, func() bool {
				got = e.do("GET", "/actions/files.move/versions/1.0.0", nil, nil)
				return bytes.Contains(got.body, []byte(`"verified":false`))
			})
		}
		m := got.json(t)
		if got.status != 200 || m["verified"] != false || !strings.HasPrefix(fmt.Sprint(m["reason"]), "BAD_SIGNATURE: ") {
			t.Errorf("after one changed byte: %d %s", got.status, got.body)
		}
		if s := m["schema"].(map[string]any); s["description"] != "Move a filE" {
			t.Errorf("the tampered document is not what is served: %v", s)
		}
		v := e.do("GET", "/actions/files.move/versions/1.0.0/verify", nil, nil).json(t)
		if v["verified"] != false || !strings.HasPrefix(fmt.Sprint(v["reason"]), "BAD_SIGNATURE: ") {
			t.Errorf("verify after the tamper: %v", v)
		}
		// The other action is untouched.
		if m := e.do("GET", "/actions/files.copy/versions/1.0.0/verify", nil, nil).json(t); m["verified"] != true {
			t.Errorf("files.copy: %v", m)
		}
	})

	t.Run("D_DiscoverListsVersions", func(t *testing.T) {
		e := env(t)
		if r := e.do("GET", "/actions", nil, nil); string(r.body) != `{"items":[]}`+"\n" {
			t.Errorf("empty registry: %s", r.body)
		}
		for _, v := range []string{"1.1.0", "1.0.0", "2.0.0-rc.1", "1.10.0"} {
			e.mustPublish(signed(t, "files.move", v, "Move a file "+v, nil), http.StatusCreated)
		}
		e.mustPublish(signed(t, "files.copy", "0.1.0-alpha", "Copy", nil), http.StatusCreated)
		r := e.do("GET", "/actions", nil, nil)
		var l struct {
			Items []struct {
				Name          string   `json:"name"`
				LatestVersion string   `json:"latest_version"`
				Versions      []string `json:"versions"`
				Description   string   `json:"description"`
			} `json:"items"`
		}
		if err := json.Unmarshal(r.body, &l); err != nil || len(l.Items) != 2 {
			t.Fatalf("list: %v %s", err, r.body)
		}
		cp, mv := l.Items[0], l.Items[1]
		if cp.Name != "files.copy" || cp.LatestVersion != "0.1.0-alpha" || strings.Join(cp.Versions, ",") != "0.1.0-alpha" {
			t.Errorf("files.copy: %+v", cp)
		}
		if mv.Name != "files.move" || mv.LatestVersion != "1.10.0" || strings.Join(mv.Versions, ",") != "1.0.0,1.1.0,1.10.0,2.0.0-rc.1" || mv.Description != "Move a file 1.10.0" {
			t.Errorf("files.move: %+v", mv)
		}
	})

	t.Run("E_NotFound", func(t *testing.T) {
		e := env(t)
		e.mustPublish(signed(t, "files.move", "1.0.0", "x", nil), http.StatusCreated)
		for _, tc := range []struct{ path, code string }{
			{"/actions/no.such/versions/1.0.0", "ACTION_NOT_FOUND"},
			{"/actions/no.such/versions/1.0.0/verify", "ACTION_NOT_FOUND"},
			{"/actions/files.move/versions/9.9.9", "VERSION_NOT_FOUND"},
			{"/actions/files.move/versions/9.9.9/verify", "VERSION_NOT_FOUND"},
		} {
			wantStatus(t, tc.path, e.do("GET", tc.path, nil, nil), 404, tc.code)
		}
	})

	t.Run("F_ImmutableConflict", func(t *testing.T) {
		e := env(t)
		first := signed(t, "files.move", "1.0.0", "one", nil)
		e.mustPublish(first, http.StatusCreated)
		r := e.publish(signed(t, "files.move", "1.0.0", "two", nil))
		wantStatus(t, "second publish", r, 409, "IMMUTABLE_VERSION_CONFLICT")
		var f map[string]any
		json.Unmarshal(first, &f)
		if d := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d["stored_hash"] != f["hash"] {
			t.Errorf("details: %v", d)
		}
		e.mustPublish(first, http.StatusOK) // identical bytes: idempotent
		if m := e.do("GET", "/actions/files.move/versions/1.0.0", nil, nil).json(t); m["schema"].(map[string]any)["description"] != "one" {
			t.Errorf("the stored version changed: %v", m)
		}
	})

	t.Run("PublishRefusals", func(t *testing.T) {
		e := env(t)
		good := e.form.body(t, signed(t, "files.move", "1.0.0", "x", nil))
		path := "/actions/files.move/versions/1.0.0"
		key := map[string]string{"X-API-Key": apiKey}
		wantStatus(t, "no key", e.do("POST", path, good, nil), 401, "UNAUTHORIZED")
		wantStatus(t, "wrong key", e.do("POST", path, good, map[string]string{"X-API-Key": apiKey + "x"}), 401, "UNAUTHORIZED")
		wantStatus(t, "form body", e.do("POST", path, good, map[string]string{"X-API-Key": apiKey, "Content-Type": "application/x-www-form-urlencoded"}), 415, "UNSUPPORTED_MEDIA_TYPE")
		for _, ct := range []string{"", "application/json-patch+json", "application/merge-patch+json", "text/json", "application/json; charset=latin1",
			"application/json; profile=x", "application/json\napplication/json", "json"} {
			wantStatus(t, "Content-Type "+strconv.Quote(ct), e.do("POST", path, good, map[string]string{"X-API-Key": apiKey, "Content-Type": ct}), 415, "UNSUPPORTED_MEDIA_TYPE")
		}
		wantStatus(t, "malformed", e.do("POST", path, []byte(`{"name": "files.move",`), key), 400, "INVALID_JSON")
		wantStatus(t, "not an object", e.do("POST", path, []byte(`[1]`), key), 400, "INVALID_JSON")
		dup := bytes.Replace(good, []byte(`"name":"files.move"`), []byte(`"name":"files.move","n\u0061me":"files.other"`), 1)
		wantStatus(t, "duplicate keys", e.do("POST", path, dup, key), 400, "INVALID_JSON")
		big := []byte(`{"name":"files.move","pad":"` + strings.Repeat("x", action.MaxDocumentSize) + `"}`)
		wantStatus(t, "oversize", e.do("POST", path, big, key), 413, "PAYLOAD_TOO_LARGE")
		wantStatus(t, "path mismatch", e.do("POST", "/actions/files.move/versions/1.0.1", good, key), 400, "INVALID_ACTION")
		wantStatus(t, "bad path name", e.do("POST", "/actions/Files/versions/1.0.0", good, key), 400, "INVALID_ACTION")
		wantStatus(t, "bad path version", e.do("POST", "/actions/files.move/versions/1.0", good, key), 400, "INVALID_ACTION")
		otherKey := strings.Replace(string(good), `"kid":"`+storetest.KID+`"`, `"kid":"nobody"`, 1)
		wantStatus(t, "unknown kid", e.do("POST", path, []byte(otherKey), key), 400, "UNKNOWN_KEY_ID")
		changed := bytes.Replace(good, []byte(`"description":"x"`), []byte(`"description":"y"`), 1)
		wantStatus(t, "changed payload", e.do("POST", path, changed, key), 400, "BAD_SIGNATURE")
		var m map[string]any
		json.Unmarshal(good, &m)
		delete(m, "signature")
		unsigned, _ := json.Marshal(m)
		wantStatus(t, "unsigned", e.do("POST", path, unsigned, key), 400, "BAD_SIGNATURE")
		if e.form.name == "envelope" {
			var env map[string]json.RawMessage
			json.Unmarshal(good, &env)
			env["name"] = json.RawMessage(`"files.other"`)
			other, _ := json.Marshal(env)
			wantStatus(t, "envelope name differs from its schema's", e.do("POST", path, other, key), 400, "INVALID_ACTION")
		}
		if l := e.do("GET", "/actions", nil, nil); string(l.body) != `{"items":[]}`+"\n" {
			t.Errorf("a refused publish was stored: %s", l.body)
		}
		// application/json in any letter case, with charset=utf-8 at most.
		for i, ct := range []string{"Application/JSON", "application/json; charset=UTF-8", "application/json;charset=utf-8"} {
			v := fmt.Sprintf("1.0.%d", i)
			r := e.do("POST", "/actions/files.move/versions/"+v, signed(t, "files.move", v, "x", nil), map[string]string{"X-API-Key": apiKey, "Content-Type": ct})
			if r.status != http.StatusCreated {
				t.Errorf("Content-Type %q: status %d %s", ct, r.status, r.body)
			}
		}
	})

}

// runStoreBehaviour is what does not depend on the body form: deprecations
// showing through the API and concurrent publishers of one version.
func runStoreBehaviour(t *testing.T, kit storeKit, env func(t *testing.T) *apiEnv) {
	t.Run("DeprecationShows", func(t *testing.T) {
		e := env(t)
		e.mustPublish(signed(t, "files.move", "1.0.0", "one", nil), http.StatusCreated)
		e.mustPublish(signed(t, "files.move", "1.1.0", "one one", nil), http.StatusCreated)
		const reason = "loses file modes; use 1.0.0"
		if _, err := e.store.Deprecate(context.Background(), "files.move", "1.1.0", &action.Deprecation{Reason: reason}); err != nil {
			t.Fatal(err)
		}
		shows := func(path, want string) bool {
			return strings.Contains(string(e.do("GET", path, nil, nil).body), want)
		}
		// a watching handler learns of the change asynchronously
		if !waitFor(10*time.Second, func() bool { return shows("/actions/files.move/versions/1.1.0", `"deprecated":true`) }) {
			t.Fatalf("GET of the deprecated version: %s", e.do("GET", "/actions/files.move/versions/1.1.0", nil, nil).body)
		}
		v := e.do("GET", "/actions/files.move/versions/1.1.0", nil, nil).json(t)
		if v["deprecation_reason"] != reason || v["verified"] != true {
			t.Errorf("GET 1.1.0: %v", v)
		}
		if r := e.do("GET", "/actions/files.move/versions/1.0.0", nil, nil); strings.Contains(string(r.body), "deprecat") {
			t.Errorf("GET 1.0.0: %s", r.body)
		}
		want := `{"items":[{"name":"files.move","latest_version":"1.0.0","versions":["1.0.0","1.1.0"],"description":"one","deprecated":{"1.1.0":"` + reason + `"}}]}` + "\n"
		if !waitFor(10*time.Second, func() bool { return string(e.do("GET", "/actions", nil, nil).body) == want }) {
			t.Fatalf("list: %s\nwant %s", e.do("GET", "/actions", nil, nil).body, want)
		}
		if _, err := e.store.Deprecate(context.Background(), "files.move", "1.1.0", nil); err != nil {
			t.Fatal(err)
		}
		if !waitFor(10*time.Second, func() bool { return !shows("/actions/files.move/versions/1.1.0", "deprecat") }) {
			t.Fatalf("still deprecated after clearing: %s", e.do("GET", "/actions/files.move/versions/1.1.0", nil, nil).body)
		}
	})

	t.Run("ConcurrentPublishersOfOneVersion", func(t *testing.T) {
		e := env(t)
		const n = 50
		docs := make([][]byte, n)
		for i := range docs {
			docs[i] = signed(t, "files.move", "1.0.0", fmt.Sprintf("publisher %d", i), nil)
		}
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range docs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i] = e.publish(docs[i]).status
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, s := range statuses {
			switch s {
			case http.StatusCreated:
				if winner >= 0 {
					t.Errorf("publishers %d and %d both got 201", winner, i)
				}
				winner = i
			case http.StatusConflict:
			default:
				t.Errorf("publisher %d: %d", i, s)
			}
		}
		if winner < 0 {
			t.Fatal("no publisher got 201")
		}
		rec, err := e.store.Get(context.Background(), "files.move", "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := action.Prepare(docs[winner])
		if !bytes.Equal(rec.Document, want.Document) {
			t.Errorf("the store holds another document than the 201's")
		}
		if l, _ := e.store.List(context.Background()); len(l) != 1 || len(l[0].Versions) != 1 {
			t.Errorf("list: %+v", l)
		}
	})
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
