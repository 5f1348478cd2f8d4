package codegen

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/schemaval"
)

//go:embed schemas/*.schema.json
var schemaFS embed.FS

// Languages are the language targets dome generates, in display order.
var Languages = []string{"go", "ts", "python"}

// ValidLanguage reports whether lang is a language target.
func ValidLanguage(lang string) bool {
	for _, l := range Languages {
		if l == lang {
			return true
		}
	}
	return false
}

// NormalizationRulesVersion names how dome normalizes inputs and outputs:
// the filtered spec is RFC 8785 canonical JSON; generated text has LF line
// endings, no trailing blanks, at most two blank lines in a row and one
// final newline;
// Go is gofmt'ed.
const NormalizationRulesVersion = "dome.norm/v1"

// BundleSpec is a parsed bundle.json.
type BundleSpec struct {
	SchemaVersion             string            `json:"schema_version"`
	ID                        string            `json:"id"`
	Description               string            `json:"description,omitempty"`
	Language                  string            `json:"language"`
	Engine                    string            `json:"engine"`
	EngineVersion             string            `json:"engine_version,omitempty"`
	NormalizationRulesVersion string            `json:"normalization_rules_version"`
	SDKFlavors                []string          `json:"sdk_flavors,omitempty"`
	Options                   map[string]any    `json:"options,omitempty"`
	Naming                    Naming            `json:"naming"`
	ReservedWords             []string          `json:"reserved_words,omitempty"`
	Outputs                   []BundleOutput    `json:"outputs"`
	Partials                  []string          `json:"partials,omitempty"`
	TemplateOverrides         map[string]string `json:"template_overrides,omitempty"`
	SymbolPattern             string            `json:"symbol_pattern"`
	Harness                   []string          `json:"harness,omitempty"`
}

// Naming says how a bundle turns spec names into identifiers.
type Naming struct {
	Operation string `json:"operation,omitempty"`
	Type      string `json:"type,omitempty"`
	Parameter string `json:"parameter,omitempty"`
}

// BundleOutput is one generated file.
type BundleOutput struct {
	Path     string `json:"path"`
	Template string `json:"template,omitempty"`
}

// Bundle is a generator bundle read from git at its pinned commit: its spec
// and every file below its folder.
type Bundle struct {
	Spec       BundleSpec
	Resolution *registry.BundleResolution
	Files      map[string][]byte // relative to the bundle folder
}

// Source names a bundle file in messages: generators/<id>/<file>@<commit>.
func (b *Bundle) Source(file string) string {
	return b.Resolution.Path + "/" + file + "@" + b.Resolution.Commit.Short()
}

// File returns a bundle file or an input error naming the bundle.
func (b *Bundle) File(name string) ([]byte, error) {
	data, ok := b.Files[name]
	if !ok {
		return nil, &errkind.InputError{Source: b.Source("bundle.json"), Problem: fmt.Sprintf("names %s, which the bundle does not have at %s", name, b.Resolution.Commit.Short()), Hint: "add the file to the bundle or fix bundle.json"}
	}
	return data, nil
}

// Flavor returns the sdk_flavor to use: want, checked against the bundle's
// list, or the bundle's default.
func (b *Bundle) Flavor(want string) (string, error) {
	if want == "" {
		if len(b.Spec.SDKFlavors) > 0 {
			return b.Spec.SDKFlavors[0], nil
		}
		return b.Spec.ID, nil
	}
	if len(b.Spec.SDKFlavors) == 0 && want == b.Spec.ID {
		return want, nil
	}
	for _, f := range b.Spec.SDKFlavors {
		if f == want {
			return want, nil
		}
	}
	return "", &errkind.InputError{Source: "generators.lock.json", Field: "sdk_flavor", Problem: fmt.Sprintf("bundle %s has no sdk_flavor %q", b.Spec.ID, want), Hint: "use one of: " + strings.Join(b.Spec.SDKFlavors, ", ")}
}

// MergeOptions returns the bundle's default options overridden by the lock
// file's; a key the bundle does not define is an input error.
func (b *Bundle) MergeOptions(lockSource string, lock map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range b.Spec.Options {
		out[k] = v
	}
	keys := make([]string, 0, len(lock))
	for k := range lock {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := b.Spec.Options[k]; !ok {
			var known []string
			for kk := range b.Spec.Options {
				known = append(known, kk)
			}
			sort.Strings(known)
			return nil, &errkind.InputError{Source: lockSource, Field: "options/" + k, Problem: fmt.Sprintf("bundle %s has no option %q", b.Spec.ID, k), Hint: "options of this bundle: " + strings.Join(known, ", ")}
		}
		out[k] = lock[k]
	}
	return out, nil
}

// bundleSchema is compiled once per process on first use.
var bundleSchema = sync.OnceValue(func() *schemaval.Schema {
	b, err := schemaFS.ReadFile("schemas/bundle.schema.json")
	if err != nil {
		panic(err)
	}
	return schemaval.MustCompile("bundle.schema.json", b)
})

// LoadBundle reads a resolved bundle from git and validates its bundle.json.
func LoadBundle(reg *registry.Registry, res *registry.BundleResolution) (*Bundle, error) {
	b := &Bundle{Resolution: res, Files: map[string][]byte{}}
	for _, f := range res.Files {
		data, err := reg.ReadBundleFile(res, f.Path)
		if err != nil {
			return nil, err
		}
		b.Files[f.Path] = data
	}
	src := b.Source("bundle.json")
	data, ok := b.Files["bundle.json"]
	if !ok {
		return nil, &errkind.InputError{Source: res.Path + "@" + res.Commit.Short(), Problem: fmt.Sprintf("bundle %s has no bundle.json at %s", res.BundleID, res.Commit.Short()), Hint: "add " + res.Path + "/bundle.json"}
	}
	if err := bundleSchema().Validate(src, data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b.Spec); err != nil {
		return nil, &errkind.InputError{Source: src, Problem: err.Error()}
	}
	if b.Spec.ID != res.BundleID {
		return nil, &errkind.InputError{Source: src, Field: "/id", Problem: fmt.Sprintf("id %q does not match the folder name %q", b.Spec.ID, res.BundleID), Hint: "rename the folder or fix the id"}
	}
	switch b.Spec.Engine {
	case "template":
		for i, o := range b.Spec.Outputs {
			if o.Template == "" {
				return nil, &errkind.InputError{Source: src, Field: fmt.Sprintf("/outputs/%d/template", i), Problem: "the template engine needs a template for every output"}
			}
			if _, err := b.File(o.Template); err != nil {
				return nil, err
			}
		}
		for _, p := range b.Spec.Partials {
			if _, err := b.File(p); err != nil {
				return nil, err
			}
		}
	case "oapi-codegen":
		if b.Spec.Language != "go" {
			return nil, &errkind.InputError{Source: src, Field: "/language", Problem: "the oapi-codegen engine generates Go only"}
		}
		engineOutputs := 0
		for i, o := range b.Spec.Outputs {
			if o.Template == "" {
				engineOutputs++
				if i != 0 {
					return nil, &errkind.InputError{Source: src, Field: fmt.Sprintf("/outputs/%d", i), Problem: "the file oapi-codegen writes (the output without a template) must be the first output"}
				}
			} else if _, err := b.File(o.Template); err != nil {
				return nil, err
			}
		}
		if engineOutputs != 1 {
			return nil, &errkind.InputError{Source: src, Field: "/outputs", Problem: "the oapi-codegen engine writes exactly one file: the first output, without a template; the others are templates"}
		}
		for _, p := range b.Spec.Partials {
			if _, err := b.File(p); err != nil {
				return nil, err
			}
		}
		for _, p := range b.Spec.TemplateOverrides {
			if _, err := b.File(p); err != nil {
				return nil, err
			}
		}
	}
	seen := map[string]bool{OperationsIndexFile: true, ManifestFile: true}
	for i, o := range b.Spec.Outputs {
		if seen[o.Path] {
			return nil, &errkind.InputError{Source: src, Field: fmt.Sprintf("/outputs/%d/path", i), Problem: fmt.Sprintf("%s is written twice or is reserved (%s, %s)", o.Path, OperationsIndexFile, ManifestFile)}
		}
		seen[o.Path] = true
	}
	for _, h := range b.Spec.Harness {
		if _, err := b.File(h); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// bundleCache loads each (bundle, commit) once.
type bundleCache struct {
	mu sync.Mutex
	m  map[string]*bundleEntry
}

type bundleEntry struct {
	once sync.Once
	b    *Bundle
	err  error
}

func (c *bundleCache) get(ctx context.Context, reg *registry.Registry, ref registry.BundleRef, toolPin registry.Pin, opts registry.PinOptions) (*Bundle, error) {
	res, err := reg.ResolveBundle(ctx, ref, toolPin, opts)
	if err != nil {
		return nil, err
	}
	key := res.BundleID + "\x00" + res.Commit.String()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*bundleEntry{}
	}
	e, ok := c.m[key]
	if !ok {
		e = &bundleEntry{}
		c.m[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.b, e.err = LoadBundle(reg, res) })
	if e.err != nil {
		return nil, e.err
	}
	// Each caller gets its own resolution (the requested ref differs).
	cp := *e.b
	cp.Resolution = res
	return &cp, nil
}
