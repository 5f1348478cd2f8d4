package codegen

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/specfilter"
)

// GeneratedFile is one file of a client, relative to the client folder.
type GeneratedFile struct {
	Path string
	Data []byte
}

// Client is one generated client: its files (operations.json included),
// its manifest and the encoded manifest bytes.
type Client struct {
	Language  string
	ToolID    string
	ProfileID string
	Files     []GeneratedFile // sorted by path; manifest.json not included
	Manifest  *Manifest
	Encoded   []byte // manifest.json
	Index     *OperationsIndex
	Bundle    *Bundle
	Filtered  *specfilter.Result
	// Policy is what the client enforces at run time; Model what it was
	// rendered from.
	Policy *Policy
	Model  *Model

	specValidation string // Manifest.SpecValidation
}

// Dir is the client's folder relative to the output directory:
// client/<lang>/<tool_id>/<profile_id>.
func (c *Client) Dir() string { return ClientDir(c.Language, c.ToolID, c.ProfileID) }

// ClientDir returns client/<lang>/<tool_id>/<profile_id>.
func ClientDir(lang, toolID, profileID string) string {
	return path.Join("client", lang, toolID, profileID)
}

// Key names a client in summaries: <lang>/<tool_id>/<profile_id>.
func (c *Client) Key() string { return c.Language + "/" + c.ToolID + "/" + c.ProfileID }

// Generator runs dome's pipeline against a registry: resolve, filter,
// generate, manifest. It caches loaded specs, filtered specs and bundles, so
// one Generator serves a whole batch; it is safe for concurrent use.
type Generator struct {
	Reg         *registry.Registry
	DomeVersion string
	// Pinned refuses bundle refs that can move (branches, HEAD, short SHAs).
	Pinned bool
	// NoValidate skips kin-openapi validation of the filtered specs (for
	// knowingly broken specs); every manifest then says so.
	NoValidate bool
	// Limits bound the spec files read (default: specfilter's).
	Limits specfilter.Limits
	// Offer lists the flags of the calling command that error hints may
	// suggest ("--no-validate", "--max-size").
	Offer specfilter.Flags

	bundles  bundleCache
	mu       sync.Mutex
	docs     map[string]*docEntry
	filtered map[string]*filterEntry
}

type docEntry struct {
	once sync.Once
	doc  *specfilter.Document
	err  error
}

type filterEntry struct {
	once sync.Once
	res  *specfilter.Result
	err  error
}

// Load returns the tool's spec at its commit (loaded once).
func (g *Generator) Load(t *registry.ToolResolution) (*specfilter.Document, error) {
	key := t.ToolTree.String()
	g.mu.Lock()
	if g.docs == nil {
		g.docs = map[string]*docEntry{}
	}
	e, ok := g.docs[key]
	if !ok {
		e = &docEntry{}
		g.docs[key] = e
	}
	g.mu.Unlock()
	e.once.Do(func() {
		files := g.Reg.Files(t)
		e.doc, e.err = specfilter.Load(files, t.Tool.Spec, specfilter.LoadOptions{Describe: files.Describe, Limits: g.Limits, Offer: g.Offer})
	})
	return e.doc, e.err
}

// Filter returns the filtered spec of a tool and profile (computed once).
func (g *Generator) Filter(t *registry.ToolResolution, pr *registry.ProfileResolution) (*specfilter.Result, error) {
	key := t.ToolTree.String() + "\x00" + pr.Blob.String()
	g.mu.Lock()
	if g.filtered == nil {
		g.filtered = map[string]*filterEntry{}
	}
	e, ok := g.filtered[key]
	if !ok {
		e = &filterEntry{}
		g.filtered[key] = e
	}
	g.mu.Unlock()
	e.once.Do(func() {
		doc, err := g.Load(t)
		if err != nil {
			e.err = err
			return
		}
		p, err := specfilter.ParseProfile(pr.Path+"@"+pr.Commit.Short(), pr.Data)
		if err != nil {
			e.err = err
			return
		}
		e.res, e.err = specfilter.Apply(doc, p, specfilter.Options{NoValidate: g.NoValidate, Offer: g.Offer})
	})
	return e.res, e.err
}

// Target returns the tool's generators.lock.json target for lang.
func (g *Generator) Target(t *registry.ToolResolution, lang string) (*registry.GeneratorTarget, error) {
	if !ValidLanguage(lang) {
		return nil, UnknownLanguage(lang)
	}
	lock, err := g.Reg.ReadGeneratorsLock(t)
	if err != nil {
		return nil, err
	}
	src := t.ToolPath + "/" + registry.GeneratorsLockFile + "@" + t.Commit.Short()
	if lock == nil {
		return nil, &errkind.InputError{Source: t.ToolPath + "@" + t.Commit.Short(), Problem: fmt.Sprintf("tool %s has no %s", t.ToolID, registry.GeneratorsLockFile), Hint: "add " + t.ToolPath + "/" + registry.GeneratorsLockFile + " pinning a generator bundle per language"}
	}
	tg, ok := lock.Targets[lang]
	if !ok {
		var langs []string
		for l := range lock.Targets {
			langs = append(langs, l)
		}
		sort.Strings(langs)
		return nil, &errkind.InputError{Source: src, Field: "/targets", Problem: fmt.Sprintf("no target for language %q", lang), Hint: "targets of " + t.ToolID + ": " + strings.Join(langs, ", ")}
	}
	return &tg, nil
}

// UnknownLanguage is the error for a language dome does not generate.
func UnknownLanguage(lang string) error {
	return &errkind.InputError{Source: "--lang", Problem: fmt.Sprintf("unknown language %q", lang), Hint: "languages: " + strings.Join(Languages, ", ")}
}

// Languages returns the languages the tool's lock file has targets for.
func (g *Generator) LockLanguages(t *registry.ToolResolution) ([]string, error) {
	lock, err := g.Reg.ReadGeneratorsLock(t)
	if err != nil || lock == nil {
		return nil, err
	}
	var out []string
	for _, l := range Languages {
		if _, ok := lock.Targets[l]; ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// Generate produces one client: tool t with profile pr in language lang.
func (g *Generator) Generate(ctx context.Context, t *registry.ToolResolution, pr *registry.ProfileResolution, lang string) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tg, err := g.Target(t, lang)
	if err != nil {
		return nil, err
	}
	lockSrc := t.ToolPath + "/" + registry.GeneratorsLockFile + "@" + t.Commit.Short()
	bref, err := registry.ParseBundleRef(lockSrc+" targets/"+lang+"/bundle", tg.Bundle)
	if err != nil {
		return nil, err
	}
	b, err := g.bundles.get(ctx, g.Reg, bref, t.Pin, registry.PinOptions{Pinned: g.Pinned, Source: lockSrc + " targets/" + lang + "/bundle"})
	if err != nil {
		return nil, err
	}
	if b.Spec.Language != lang {
		return nil, &errkind.InputError{Source: lockSrc, Field: "/targets/" + lang + "/bundle", Problem: fmt.Sprintf("bundle %s generates %s, not %s", b.Spec.ID, b.Spec.Language, lang), Hint: "pin a " + lang + " bundle for this target"}
	}
	flavor, err := b.Flavor(tg.SDKFlavor)
	if err != nil {
		return nil, err
	}
	opts, err := b.MergeOptions(lockSrc, tg.Options)
	if err != nil {
		return nil, err
	}
	res, err := g.Filter(t, pr)
	if err != nil {
		return nil, err
	}
	profSrc := pr.Path + "@" + pr.Commit.Short()
	prof, err := specfilter.ParseProfile(profSrc, pr.Data)
	if err != nil {
		return nil, err
	}
	profDigest, err := canonical.DigestJSON(pr.Data)
	if err != nil {
		// ParseProfile already refused what RFC 8785 cannot read; this is
		// bad input all the same, never an internal failure.
		return nil, &errkind.InputError{Source: profSrc, Problem: err.Error(), Err: err, Hint: "write the profile as valid UTF-8 JSON"}
	}
	c, err := Render(RenderInput{ToolID: t.ToolID, ProfileID: pr.ProfileID, Bundle: b, SDKFlavor: flavor, Options: opts, Filtered: res,
		Profile: prof, ProfileSource: profSrc, ProfileDigest: profDigest, GeneratorBundle: b.Resolution.Requested})
	if err != nil {
		return nil, err
	}
	doc, err := g.Load(t)
	if err != nil {
		return nil, err
	}
	in := Inputs{
		ToolID: t.ToolID, SpecRef: t.Commit.String(), SpecBlobs: map[string]string{},
		ProfileID: pr.ProfileID, ProfileRef: pr.Commit.String(), ProfileBlob: pr.Blob.String(),
		GeneratorBundle: b.Resolution.Requested, GeneratorBundleRef: b.Resolution.Commit.String(), BundleTree: b.Resolution.Tree.String(),
		LanguageTarget: lang, SDKFlavor: flavor, Options: opts,
		NormalizationRulesVersion: NormalizationRulesVersion, FilteredSpecDigest: res.Digest,
	}
	in.ProfileDigest = profDigest
	for _, f := range doc.Files {
		for _, e := range t.Files {
			if e.Path == f {
				in.SpecBlobs[t.ToolPath+"/"+f] = e.Blob.String()
			}
		}
	}
	if g.NoValidate {
		c.specValidation = SpecValidationSkipped
	}
	if err := c.seal(in, g.DomeVersion); err != nil {
		return nil, err
	}
	return c, nil
}

// RenderInput is everything a bundle needs to render one client.
type RenderInput struct {
	ToolID, ProfileID string
	Bundle            *Bundle
	SDKFlavor         string
	Options           map[string]any
	Filtered          *specfilter.Result
	// Profile is the parsed profile the client enforces at run time
	// (ProfileSource names it in messages); nil renders a client whose
	// policy is the profile-less default (any host, any auth, no budgets).
	Profile       *specfilter.Profile
	ProfileSource string
	ProfileDigest string
	// GeneratorBundle is the bundle as the lock names it.
	GeneratorBundle string
}

// Render runs a bundle over a filtered spec: the generated files and the
// operations index, without a manifest (Generator.Generate adds it).
func Render(in RenderInput) (*Client, error) {
	b := in.Bundle
	n := NewNamer(b.Spec)
	src := fmt.Sprintf("filtered spec of %s/%s (%s)", in.ToolID, in.ProfileID, in.Filtered.Digest)
	model, err := BuildModel(src, in.Filtered.JSON, n)
	if err != nil {
		return nil, err
	}
	rt, err := runtimeData(in, model)
	if err != nil {
		return nil, err
	}
	data := &TemplateData{ToolID: in.ToolID, ProfileID: in.ProfileID, Bundle: b.Spec.ID, Language: b.Spec.Language, SDKFlavor: in.SDKFlavor, Options: in.Options, Model: model, Runtime: rt}
	var files []GeneratedFile
	switch b.Spec.Engine {
	case "oapi-codegen":
		if files, err = generateGo(b, in.Filtered, in.Options, in.ToolID); err != nil {
			return nil, err
		}
		// The bundle's other outputs (the run-time layer) are templates.
		more, err := renderTemplates(b, data, n)
		if err != nil {
			return nil, err
		}
		for i, f := range more {
			if strings.HasSuffix(f.Path, ".go") {
				if more[i].Data, err = formatGo(f.Path, f.Data); err != nil {
					return nil, &errkind.InputError{Source: b.Source(templateOf(b, f.Path)), Problem: "the rendered Go does not parse: " + err.Error(), Hint: "fix the template", Err: err}
				}
			}
		}
		files = append(files, more...)
	default:
		if files, err = renderTemplates(b, data, n); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		if err := checkOutputPath(f.Path); err != nil {
			return nil, &errkind.InputError{Source: b.Source("bundle.json"), Problem: fmt.Sprintf("output %q: %v", f.Path, err)}
		}
	}
	idx := buildIndex(in.ToolID, in.ProfileID, b, model)
	ib, err := idx.Encode()
	if err != nil {
		return nil, err
	}
	files = append(files, GeneratedFile{Path: OperationsIndexFile, Data: ib})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return &Client{Language: b.Spec.Language, ToolID: in.ToolID, ProfileID: in.ProfileID, Files: files, Index: idx, Bundle: b, Filtered: in.Filtered, Policy: rt.Policy, Model: model}, nil
}

// seal computes the outputs list and the manifest.
func (c *Client) seal(in Inputs, domeVersion string) error {
	m := &Manifest{ArtifactKind: ManifestKind, Canonicalization: canonical.Name, Inputs: in, Outputs: []OutputRef{}, SpecValidation: c.specValidation}
	if c.Bundle.Spec.Engine == "oapi-codegen" {
		m.Toolchain = Toolchain{DomeVersion: domeVersion, Engine: "oapi-codegen", EngineVersion: OapiCodegenVersion(), Formatter: "go/format", FormatterVersion: goFormatterVersion()}
	} else {
		m.Toolchain = Toolchain{DomeVersion: domeVersion, Engine: "dome-template", EngineVersion: TemplateEngineVersion, Formatter: "dome-textnorm", FormatterVersion: NormalizationRulesVersion}
	}
	for _, f := range c.Files {
		m.Outputs = append(m.Outputs, OutputRef{Path: f.Path, SHA256: FileDigest(f.Data), Size: int64(len(f.Data))})
	}
	h, err := ArtifactHash(m.Outputs)
	if err != nil {
		return err
	}
	m.ClientArtifactHash = h
	enc, err := m.Encode()
	if err != nil {
		return err
	}
	c.Manifest, c.Encoded = m, enc
	return nil
}

// checkOutputPath accepts a clean relative path inside the client folder.
func checkOutputPath(p string) error {
	clean, err := registry.CleanRelPath(p)
	if err != nil {
		return err
	}
	if clean != p {
		return fmt.Errorf("not a clean relative path (want %q)", clean)
	}
	if p == ManifestFile {
		return fmt.Errorf("%s is written by dome", ManifestFile)
	}
	return nil
}
