package specdiff_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/specdiff"
)

const base = `{
 "openapi": "3.0.3",
 "paths": {
  "/pets": {
   "get": {"operationId": "listPets",
     "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    {"name": "status", "in": "query", "schema": {"$ref": "#/components/schemas/Status"}}],
     "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}},
                   "404": {"description": "none"}}},
   "post": {"operationId": "createPet",
     "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}, "application/xml": {"schema": {"type": "object"}}}},
     "responses": {"201": {"description": "created"}}}
  },
  "/pets/{id}": {
   "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
   "delete": {"operationId": "deletePet", "responses": {"204": {"description": "gone"}}}
  }
 },
 "components": {
  "schemas": {
   "Status": {"type": "string", "enum": ["available", "pending", "sold"]},
   "NewPet": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "tag": {"type": "string"}, "owner": {"$ref": "#/components/schemas/Owner"}}},
   "Pet": {"allOf": [{"$ref": "#/components/schemas/NewPet"}, {"type": "object", "properties": {"id": {"type": "integer"}}}]},
   "Owner": {"type": "object", "properties": {"name": {"type": "string"}, "pets": {"type": "array", "items": {"$ref": "#/components/schemas/NewPet"}}}}
  },
  "securitySchemes": {"apiKey": {"type": "apiKey", "in": "header", "name": "X-Key"}, "bearer": {"type": "http", "scheme": "bearer"}}
 }
}`

// mutate applies f to a fresh copy of base.
func mutate(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func at(m map[string]any, path ...string) map[string]any {
	cur := m
	for _, p := range path {
		cur = cur[p].(map[string]any)
	}
	return cur
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name     string
		f        func(m map[string]any)
		kind     string
		breaking bool
		op       string
	}{
		{"removed operation", func(m map[string]any) { delete(at(m, "paths", "/pets"), "post") }, specdiff.RemovedOperation, true, "createPet"},
		{"added operation", func(m map[string]any) {
			at(m, "paths", "/pets/{id}")["get"] = map[string]any{"operationId": "getPet", "responses": map[string]any{}}
		}, specdiff.AddedOperation, false, "getPet"},
		{"removed parameter", func(m map[string]any) {
			at(m, "paths", "/pets", "get")["parameters"] = []any{at(m, "paths", "/pets", "get")["parameters"].([]any)[1]}
		}, specdiff.RemovedParameter, true, "listPets"},
		{"renamed parameter", func(m map[string]any) {
			p := at(m, "paths", "/pets", "get")["parameters"].([]any)[0].(map[string]any)
			p["name"] = "max"
		}, specdiff.RemovedParameter, true, "listPets"},
		{"parameter newly required", func(m map[string]any) {
			at(m, "paths", "/pets", "get")["parameters"].([]any)[0].(map[string]any)["required"] = true
		}, specdiff.ParameterNewlyRequired, true, "listPets"},
		{"new required parameter", func(m map[string]any) {
			op := at(m, "paths", "/pets", "get")
			op["parameters"] = append(op["parameters"].([]any), map[string]any{"name": "x", "in": "header", "required": true})
		}, specdiff.ParameterNewlyRequired, true, "listPets"},
		{"new optional parameter", func(m map[string]any) {
			op := at(m, "paths", "/pets", "get")
			op["parameters"] = append(op["parameters"].([]any), map[string]any{"name": "x", "in": "query"})
		}, specdiff.AddedParameter, false, "listPets"},
		{"property newly required", func(m map[string]any) {
			at(m, "components", "schemas", "NewPet")["required"] = []any{"name", "tag"}
		}, specdiff.PropertyNewlyRequired, true, "createPet"},
		{"type change", func(m map[string]any) {
			at(m, "components", "schemas", "NewPet", "properties", "tag")["type"] = "integer"
		}, specdiff.TypeChanged, true, "createPet"},
		{"parameter type change", func(m map[string]any) {
			at(m, "paths", "/pets/{id}")["parameters"].([]any)[0].(map[string]any)["schema"] = map[string]any{"type": "integer"}
		}, specdiff.TypeChanged, true, "deletePet"},
		{"narrowed enum via $ref", func(m map[string]any) {
			at(m, "components", "schemas", "Status")["enum"] = []any{"available", "sold"}
		}, specdiff.EnumNarrowed, true, "listPets"},
		{"widened enum", func(m map[string]any) {
			at(m, "components", "schemas", "Status")["enum"] = []any{"available", "pending", "sold", "lost"}
		}, specdiff.EnumWidened, false, "listPets"},
		{"removed response code", func(m map[string]any) {
			delete(at(m, "paths", "/pets", "get", "responses"), "404")
		}, specdiff.RemovedResponse, true, "listPets"},
		{"removed request media type", func(m map[string]any) {
			delete(at(m, "paths", "/pets", "post", "requestBody", "content"), "application/xml")
		}, specdiff.RemovedMediaType, true, "createPet"},
		{"removed response media type", func(m map[string]any) {
			delete(at(m, "paths", "/pets", "get", "responses", "200", "content"), "application/json")
		}, specdiff.RemovedMediaType, true, "listPets"},
		{"removed security scheme", func(m map[string]any) {
			delete(at(m, "components", "securitySchemes"), "bearer")
		}, specdiff.RemovedSecurityScheme, true, ""},
		{"request body newly required", func(m map[string]any) {
			at(m, "paths", "/pets", "post", "requestBody")["required"] = true
		}, specdiff.RequestBodyNewlyRequired, true, "createPet"},
		{"removed response property (through allOf and $ref)", func(m map[string]any) {
			at(m, "components", "schemas", "Pet")["allOf"].([]any)[1].(map[string]any)["properties"] = map[string]any{}
		}, specdiff.RemovedProperty, true, "listPets"},
		{"deep change through a cycle-free chain", func(m map[string]any) {
			at(m, "components", "schemas", "Owner", "properties", "name")["type"] = "boolean"
		}, specdiff.TypeChanged, true, "createPet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := specdiff.Diff([]byte(base), mutate(t, tt.f))
			if err != nil {
				t.Fatal(err)
			}
			list := r.NonBreaking
			if tt.breaking {
				list = r.Breaking
			}
			found := false
			for _, c := range list {
				if c.Kind == tt.kind && c.Operation == tt.op {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s (breaking=%v) on %q; got %+v", tt.kind, tt.breaking, tt.op, r)
			}
			if !tt.breaking && r.HasBreaking() {
				t.Errorf("a non-breaking change reported breaking: %+v", r.Breaking)
			}
		})
	}
}

func TestDiff_IdenticalAndStable(t *testing.T) {
	r, err := specdiff.Diff([]byte(base), []byte(base))
	if err != nil || len(r.Breaking)+len(r.NonBreaking) != 0 {
		t.Fatalf("identical specs: %+v, %v", r, err)
	}
	changed := mutate(t, func(m map[string]any) {
		delete(m["paths"].(map[string]any), "/pets")
		delete(at(m, "components", "securitySchemes"), "apiKey")
	})
	a, _ := specdiff.Diff([]byte(base), changed)
	for i := 0; i < 10; i++ {
		b, _ := specdiff.Diff([]byte(base), changed)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatal("diff output is not stable")
		}
	}
	if len(a.Breaking) != 3 {
		t.Errorf("want 3 breaking changes (2 operations, 1 scheme), got %+v", a.Breaking)
	}
}

func TestDiff_Cycles(t *testing.T) {
	cyclic := `{"paths": {"/n": {"get": {"operationId": "n", "responses": {"200": {"description": "", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}}}},
	  "components": {"schemas": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Node"}, "v": {"type": "string"}}}}}}`
	changed := strings.Replace(cyclic, `"v": {"type": "string"}`, `"v": {"type": "number"}`, 1)
	r, err := specdiff.Diff([]byte(cyclic), []byte(changed))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Breaking) != 1 || r.Breaking[0].Kind != specdiff.TypeChanged {
		t.Fatalf("got %+v", r)
	}
}

func FuzzDiff(f *testing.F) {
	f.Add([]byte(base), []byte(base))
	f.Add([]byte(`{"paths":{}}`), []byte(`{"paths":{"/a":{"get":{}}}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		specdiff.Diff(a, b) // must not panic or loop on any JSON
	})
}
