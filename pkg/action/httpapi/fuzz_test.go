package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dome-registry/dome/pkg/action/httpapi"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

// FuzzPublish sends arbitrary bodies and paths to the publish endpoint: the
// handler never fails with a 500 or a panic, always answers JSON (an error
// object with a documented code, or a version), and stores only documents
// that verify.
func FuzzPublish(f *testing.F) {
	good := signed(f, "files.move", "1.0.0", "x", nil)
	f.Add("files.move", "1.0.0", good)
	f.Add("files.move", "1.0.1", good)
	f.Add("files.move", "1.0.0", bytes.Replace(good, []byte(`"x"`), []byte(`"y"`), 1))
	f.Add("files.move", "1.0.0", []byte(`{"name":"files.move","version":"1.0.0","name":"x"}`))
	f.Add("a", "0.0.1-rc.1", []byte(`{"name":"a","version":"0.0.1-rc.1","hash":"sha256:00","signature":{"alg":"ed25519","kid":"k","sig":"base64:"}}`))
	f.Add("x", "1.0.0", []byte(`[`))
	_, keys := storetest.Key(f)
	codes := map[string]bool{}
	for _, c := range httpapi.Codes() {
		codes[c] = true
	}
	f.Fuzz(func(t *testing.T, name, version string, body []byte) {
		s := newMemStore()
		h, err := httpapi.New(httpapi.Options{Store: s, Keys: keys, APIKey: apiKey, MaxBodyBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		req.URL.Path = "/actions/" + name + "/versions/" + version
		req.Header.Set("X-API-Key", apiKey)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code == http.StatusInternalServerError {
			t.Fatalf("500 for %q@%q %q: %s", name, version, body, w.Body)
		}
		var out map[string]json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatalf("%d answer is not a JSON object: %q", w.Code, w.Body)
		}
		if w.Code == http.StatusCreated || w.Code == http.StatusOK && out["verified"] != nil {
			var v struct{ Verified bool }
			json.Unmarshal(w.Body.Bytes(), &v)
			if !v.Verified {
				t.Fatalf("stored a document that does not verify: %s", w.Body)
			}
			return
		}
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		json.Unmarshal(w.Body.Bytes(), &e)
		if !codes[e.Error.Code] || httpapi.Status(e.Error.Code) != w.Code {
			t.Fatalf("%d with code %q: %s", w.Code, e.Error.Code, w.Body)
		}
	})
}
