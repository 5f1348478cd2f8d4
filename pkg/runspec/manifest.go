package runspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// ManifestKind is the artifact kind of a run manifest.
const ManifestKind = "dome.run.manifest/v1"

// ManifestFile is a run manifest's name inside its run folder.
const ManifestFile = "run.manifest.json"

// ManifestSchemaJSON returns the JSON Schema of a manifest's payload.
func ManifestSchemaJSON() []byte {
	b, _ := schemaFS.ReadFile("schemas/run_manifest.schema.json")
	return b
}

var compileManifest = sync.OnceValue(func() *schemaval.Schema {
	return schemaval.MustCompile("run_manifest.schema.json", ManifestSchemaJSON())
})

// Manifest pins everything a run depends on, so that it can be replayed:
// the base commit workers see, the registry commit skills and cards are read
// at, the queue, the policies, the cards, the determinism seed and the environment.
type Manifest struct {
	RunID           string       `json:"run_id"`
	BaseCommit      string       `json:"base_commit"`
	RegistryCommit  string       `json:"registry_commit"`
	QueueDigest     string       `json:"queue_digest"`
	PolicyDigest    string       `json:"policy_digest"` // PolicyDigestOf(Policies)
	Policies        []PinnedFile `json:"policies"`      // sorted by path
	Cards           []PinnedCard `json:"cards"`         // sorted by kind, then id
	DeterminismSeed string       `json:"determinism_seed"`
	Environment     Environment  `json:"environment"`
}

// PinnedFile is one policy file: where it was read and its digest.
type PinnedFile struct {
	Path   string `json:"path"`
	Digest string `json:"digest"` // of its canonical bytes
	Source string `json:"source"` // built-in, file, or git:<commit>
}

// PinnedCard is one A2A card a run uses, pinned to the commit it was read at.
type PinnedCard struct {
	CardID string `json:"card_id"`
	Kind   string `json:"kind"` // runtime, tool
	Commit string `json:"commit"`
	Path   string `json:"path"`
	Digest string `json:"digest"`
}

// Environment is what ran the run.
type Environment struct {
	DomeVersion string      `json:"dome_version"`
	GoVersion   string      `json:"go_version"`
	OS          string      `json:"os"`
	Arch        string      `json:"arch"`
	Kernel      string      `json:"kernel"`
	Sandbox     SandboxInfo `json:"sandbox"`
}

// SandboxInfo says how workers were confined: bubblewrap with its version,
// or none with the reason (the user asked for --sandbox=none).
type SandboxInfo struct {
	Kind    string `json:"kind"` // bubblewrap, none
	Version string `json:"version,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// PolicyDigestOf returns the digest that pins a set of policy files: the
// digest of the canonical JSON of the list sorted by path.
func PolicyDigestOf(files []PinnedFile) (string, error) {
	s := append([]PinnedFile(nil), files...)
	sort.Slice(s, func(a, b int) bool { return s[a].Path < s[b].Path })
	b, err := canonical.Marshal(s)
	if err != nil {
		return "", err
	}
	return canonical.Digest(b), nil
}

// normalize sorts the lists and fills in the policy digest.
func (m *Manifest) normalize() error {
	sort.Slice(m.Policies, func(a, b int) bool { return m.Policies[a].Path < m.Policies[b].Path })
	sort.Slice(m.Cards, func(a, b int) bool {
		if m.Cards[a].Kind != m.Cards[b].Kind {
			return m.Cards[a].Kind < m.Cards[b].Kind
		}
		return m.Cards[a].CardID < m.Cards[b].CardID
	})
	if m.Cards == nil {
		m.Cards = []PinnedCard{}
	}
	d, err := PolicyDigestOf(m.Policies)
	if err != nil {
		return err
	}
	m.PolicyDigest = d
	return nil
}

// Seal validates m and returns the sealed run.manifest.json (an artifact:
// header + canonical payload) created at at by producer.
func (m Manifest) Seal(at time.Time, producer string) ([]byte, error) {
	m.Policies = append([]PinnedFile(nil), m.Policies...)
	m.Cards = append([]PinnedCard(nil), m.Cards...)
	if err := m.normalize(); err != nil {
		return nil, err
	}
	payload, err := canonical.Marshal(m)
	if err != nil {
		return nil, err
	}
	if err := compileManifest().Validate("run manifest", payload); err != nil {
		return nil, err
	}
	h := artifact.Header{ArtifactKind: ManifestKind, Version: "1", ObjectID: "run.manifest." + m.RunID, RunID: m.RunID,
		BaseRef: m.BaseCommit, CreatedAt: artifact.FormatTime(at), Producer: producer, InputsHash: m.QueueDigest,
		DeterminismSeed: m.DeterminismSeed}
	doc, _, err := artifact.Seal(h, payload, nil)
	return doc, err
}

// OpenManifest reads a sealed run manifest: the artifact must check (kind,
// payload digest), the payload must match the schema, and its policy digest
// must be the digest of its policies.
func OpenManifest(source string, doc []byte) (*Manifest, artifact.Header, error) {
	s, err := artifact.Open(doc, artifact.OpenOptions{Kind: ManifestKind})
	if err != nil {
		field := ""
		if errors.Is(err, artifact.ErrDigestMismatch) {
			field = "/header/payload_digest"
		}
		return nil, artifact.Header{}, &errkind.InputError{Source: source, Field: field, Problem: err.Error(), Err: err}
	}
	if err := compileManifest().Validate(source, s.Payload); err != nil {
		return nil, artifact.Header{}, err
	}
	var m Manifest
	if err := strictJSON(s.Payload, &m); err != nil {
		return nil, artifact.Header{}, &errkind.InputError{Source: source, Field: "/payload", Problem: err.Error()}
	}
	want, err := PolicyDigestOf(m.Policies)
	if err != nil {
		return nil, artifact.Header{}, err
	}
	if want != m.PolicyDigest {
		return nil, artifact.Header{}, &errkind.InputError{Source: source, Field: "/payload/policy_digest",
			Problem: fmt.Sprintf("%s, but the policies listed hash to %s", m.PolicyDigest, want)}
	}
	if s.Header.RunID != m.RunID || s.Header.BaseRef != m.BaseCommit {
		return nil, artifact.Header{}, &errkind.InputError{Source: source, Field: "/header",
			Problem: "the header's run_id or base_ref does not match the payload"}
	}
	return &m, s.Header, nil
}

// strictJSON decodes data into v refusing unknown members and trailing data.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}
