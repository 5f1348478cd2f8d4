package specfilter

import (
	"os"
	"path/filepath"
	"testing"
)

// Apply shares unchanged components with its input: it must leave the
// input exactly as it was (lines included), whatever the profile changes in
// the output, so that one Document serves many profiles.
func TestApply_LeavesTheInputAsItWas(t *testing.T) {
	const spec = `openapi: 3.1.0
info: {title: t, version: '1', x-internal: a}
servers: [{url: 'https://api.example.com'}]
paths:
  /a:
    servers: [{url: 'https://a.example.com'}]
    get:
      operationId: a
      x-internal: b
      servers: [{url: 'https://op.example.com'}]
      callbacks:
        onEvent: {$ref: '#/components/callbacks/Ev'}
        inline:
          '{$request.body#/url}': {$ref: '#/components/pathItems/Hook'}
      responses:
        '200': {$ref: '#/components/responses/Ok'}
        '201':
          description: made
          links:
            toB: {operationId: b}
            toA: {operationId: a}
  /b:
    get:
      operationId: b
      responses: {'200': {description: ok}}
components:
  schemas:
    S: {type: object, x-internal: c, properties: {n: {type: string, x-internal: d}}}
  responses:
    Ok:
      description: ok
      x-internal: e
      content: {application/json: {schema: {$ref: '#/components/schemas/S'}}}
      links:
        toB: {operationId: b}
        toA: {operationId: a}
  callbacks:
    Ev:
      '{$request.body#/cb}': {$ref: '#/components/pathItems/Hook'}
  pathItems:
    Hook:
      post:
        operationId: hook
        callbacks:
          again: {'{$url}': {$ref: '#/components/pathItems/Hook2'}}
        responses: {'200': {description: ok, x-internal: f}}
    Hook2:
      post: {operationId: hook2, responses: {'200': {description: ok}}}
`
	profiles := []string{
		``,
		`,"allow":{"operations":["a"]}`,
		`,"allow":{"operations":["a"]},"strip_extensions":["x-internal"]`,
		`,"allow":{"operations":["a"]},"servers":[{"url":"https://gw.example.com"}]`,
		`,"allow":{"operations":["a"]},"strip_extensions":["x-"],"servers":[{"url":"https://gw.example.com"}]`,
	}
	doc, err := LoadBytes("spec/openapi.yaml", []byte(spec), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]*Document{"inline": doc, "shop": loadShop(t)}
	tools, _ := filepath.Glob("../../registry/tools/*/spec/openapi.yaml")
	for _, s := range tools {
		fr, err := OpenDir(filepath.Dir(filepath.Dir(s)))
		if err != nil {
			t.Fatal(err)
		}
		defer fr.Close()
		if d, err := Load(fr, "spec/openapi.yaml", LoadOptions{}); err == nil {
			docs[s] = d
		}
	}
	if _, err := os.Stat(stripeSpec); err == nil {
		fr, _ := OpenDir(filepath.Dir(stripeSpec))
		defer fr.Close()
		if d, err := Load(fr, filepath.Base(stripeSpec), LoadOptions{}); err == nil {
			docs["stripe"] = d
			profiles = append(profiles, `,"allow":{"operations":["* /v1/charges/**"]},"strip_extensions":["x-stripe"]`, `,"allow":{"operations":["* /v1/charges/**"]}`)
		}
	}
	for name, d := range docs {
		before := d.Root.Copy()
		for _, body := range profiles {
			p := profile(t, body)
			first, err := Apply(d, p, Options{NoValidate: true, AllowEmptySelectors: true})
			if err != nil {
				continue // a selector this document does not have
			}
			if diff := sameValue(d.Root, before, ""); diff != "" {
				t.Fatalf("%s, profile %s: Apply changed its input at %s", name, body, diff)
			}
			again, err := Apply(d, p, Options{NoValidate: true, AllowEmptySelectors: true})
			if err != nil || string(again.JSON) != string(first.JSON) {
				t.Fatalf("%s, profile %s: a second Apply gives other bytes (%v)", name, body, err)
			}
		}
	}
}
