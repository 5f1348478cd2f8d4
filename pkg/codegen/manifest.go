package codegen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// File names dome writes into every client folder.
const (
	ManifestFile        = "manifest.json"
	OperationsIndexFile = "operations.json"
)

// ManifestKind is the manifest's artifact_kind.
const ManifestKind = "dome.generation_manifest/v1"

// Manifest is a client's manifest.json: every input by ref and hash, the
// toolchain, and every generated file's sha256. It carries no timestamps,
// so the same inputs give the same bytes everywhere.
type Manifest struct {
	ArtifactKind       string      `json:"artifact_kind"`
	Canonicalization   string      `json:"canonicalization"`
	Inputs             Inputs      `json:"inputs"`
	Toolchain          Toolchain   `json:"toolchain"`
	Outputs            []OutputRef `json:"outputs"`
	ClientArtifactHash string      `json:"client_artifact_hash"`
	// SpecValidation is "skipped" when the filtered spec was not validated
	// (gen --no-validate); absent when it was.
	SpecValidation string `json:"spec_validation,omitempty"`
}

// SpecValidationSkipped marks a client generated with gen --no-validate.
const SpecValidationSkipped = "skipped"

// Inputs are what a client is generated from.
type Inputs struct {
	ToolID                    string            `json:"tool_id"`
	SpecRef                   string            `json:"spec_ref"`   // the tool's commit
	SpecBlobs                 map[string]string `json:"spec_blobs"` // repository path -> blob id
	ProfileID                 string            `json:"profile_id"`
	ProfileRef                string            `json:"profile_ref"` // the profile's commit
	ProfileBlob               string            `json:"profile_blob"`
	ProfileDigest             string            `json:"profile_digest"`       // sha256 of the profile's canonical JSON
	GeneratorBundle           string            `json:"generator_bundle"`     // as the lock wrote it
	GeneratorBundleRef        string            `json:"generator_bundle_ref"` // the bundle's commit
	BundleTree                string            `json:"bundle_tree"`
	LanguageTarget            string            `json:"language_target"`
	SDKFlavor                 string            `json:"sdk_flavor"`
	Options                   map[string]any    `json:"options"`
	NormalizationRulesVersion string            `json:"normalization_rules_version"`
	FilteredSpecDigest        string            `json:"filtered_spec_digest"`
}

// Toolchain is what ran.
type Toolchain struct {
	DomeVersion      string `json:"dome_version"`
	Engine           string `json:"engine"`
	EngineVersion    string `json:"engine_version"`
	Formatter        string `json:"formatter"`
	FormatterVersion string `json:"formatter_version"`
}

// OutputRef is one generated file.
type OutputRef struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// FileDigest returns "sha256:<hex>" of data.
func FileDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ArtifactHash is the digest of the canonical JSON of outputs (sorted by path).
func ArtifactHash(outputs []OutputRef) (string, error) {
	b, err := canonical.Marshal(outputs)
	if err != nil {
		return "", err
	}
	return canonical.Digest(b), nil
}

// Encode returns the manifest's bytes: its RFC 8785 canonical form, indented
// for review (keys stay sorted), with a final newline.
func (m *Manifest) Encode() ([]byte, error) {
	c, err := canonical.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, c, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

var manifestSchema = sync.OnceValue(func() *schemaval.Schema {
	b, err := schemaFS.ReadFile("schemas/manifest.schema.json")
	if err != nil {
		panic(err)
	}
	return schemaval.MustCompile("manifest.schema.json", b)
})

// ParseManifest validates and decodes a manifest.json; source names it.
func ParseManifest(source string, data []byte) (*Manifest, error) {
	if err := manifestSchema().Validate(source, data); err != nil {
		return nil, err
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	for i := 1; i < len(m.Outputs); i++ {
		if m.Outputs[i-1].Path >= m.Outputs[i].Path {
			return nil, &errkind.InputError{Source: source, Field: fmt.Sprintf("/outputs/%d", i), Problem: "outputs are not sorted by path or repeat a path"}
		}
	}
	for i, o := range m.Outputs {
		if err := checkOutputPath(o.Path); err != nil {
			return nil, &errkind.InputError{Source: source, Field: fmt.Sprintf("/outputs/%d/path", i), Problem: err.Error()}
		}
	}
	return &m, nil
}

func validationName(v string) string {
	if v == "" {
		return "validated"
	}
	return v + " (--no-validate)"
}

// sameContent reports whether two manifests describe the same client from
// the same content: everything equal except the commits the inputs were
// read at (spec_ref, profile_ref, generator_bundle_ref), which change with
// every commit of the repository while the blobs and trees stay the same.
func sameContent(a, b *Manifest) bool {
	if a == nil || b == nil {
		return false
	}
	x, y := *a, *b
	x.Inputs.SpecRef, y.Inputs.SpecRef = "", ""
	x.Inputs.ProfileRef, y.Inputs.ProfileRef = "", ""
	x.Inputs.GeneratorBundleRef, y.Inputs.GeneratorBundleRef = "", ""
	xb, err1 := canonical.Marshal(x)
	yb, err2 := canonical.Marshal(y)
	return err1 == nil && err2 == nil && bytes.Equal(xb, yb)
}

// Causes names which inputs differ between an old and a new manifest:
// spec, profile, bundle, generators lock, toolchain, normalization.
func Causes(old, cur *Manifest) []string {
	var out []string
	if old == nil || cur == nil {
		return nil
	}
	oi, ni := old.Inputs, cur.Inputs
	if !reflect.DeepEqual(oi.SpecBlobs, ni.SpecBlobs) {
		var changed []string
		for p, b := range ni.SpecBlobs {
			if oi.SpecBlobs[p] != b {
				changed = append(changed, p)
			}
		}
		for p := range oi.SpecBlobs {
			if _, ok := ni.SpecBlobs[p]; !ok {
				changed = append(changed, p)
			}
		}
		sort.Strings(changed)
		out = append(out, fmt.Sprintf("spec changed (%s): %s -> %s", joinMax(changed, 3), short(oi.SpecRef), short(ni.SpecRef)))
	}
	if oi.ProfileDigest != ni.ProfileDigest {
		out = append(out, fmt.Sprintf("profile %s changed: %s -> %s", ni.ProfileID, short(oi.ProfileBlob), short(ni.ProfileBlob)))
	}
	if oi.BundleTree != ni.BundleTree || oi.GeneratorBundle != ni.GeneratorBundle {
		out = append(out, fmt.Sprintf("bundle changed: %s (tree %s) -> %s (tree %s)", oi.GeneratorBundle, short(oi.BundleTree), ni.GeneratorBundle, short(ni.BundleTree)))
	}
	if oi.SDKFlavor != ni.SDKFlavor || !jsonEqual(oi.Options, ni.Options) {
		out = append(out, "generators.lock.json changed: sdk_flavor or options differ")
	}
	if old.SpecValidation != cur.SpecValidation {
		out = append(out, fmt.Sprintf("spec validation: %s -> %s", validationName(old.SpecValidation), validationName(cur.SpecValidation)))
	}
	if oi.NormalizationRulesVersion != ni.NormalizationRulesVersion {
		out = append(out, fmt.Sprintf("normalization rules changed: %s -> %s", oi.NormalizationRulesVersion, ni.NormalizationRulesVersion))
	}
	if old.Toolchain != cur.Toolchain {
		o, n := old.Toolchain, cur.Toolchain
		var d []string
		if o.DomeVersion != n.DomeVersion {
			d = append(d, fmt.Sprintf("dome %s -> %s", o.DomeVersion, n.DomeVersion))
		}
		if o.Engine != n.Engine || o.EngineVersion != n.EngineVersion {
			d = append(d, fmt.Sprintf("%s %s -> %s %s", o.Engine, o.EngineVersion, n.Engine, n.EngineVersion))
		}
		if o.Formatter != n.Formatter || o.FormatterVersion != n.FormatterVersion {
			d = append(d, fmt.Sprintf("%s %s -> %s %s", o.Formatter, o.FormatterVersion, n.Formatter, n.FormatterVersion))
		}
		out = append(out, "toolchain changed: "+joinMax(d, 3))
	}
	if len(out) == 0 && oi.FilteredSpecDigest != ni.FilteredSpecDigest {
		out = append(out, "filtered spec changed with the same spec and profile (spec filter rules)")
	}
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := canonical.Marshal(a)
	y, _ := canonical.Marshal(b)
	return bytes.Equal(x, y)
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	if s == "" {
		return "(none)"
	}
	return s
}

func joinMax(xs []string, n int) string {
	if len(xs) <= n {
		return join(xs)
	}
	return join(xs[:n]) + fmt.Sprintf(" and %d more", len(xs)-n)
}

func join(xs []string) string {
	var b bytes.Buffer
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}
