package specfilter

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/dome-registry/dome/internal/lazyre"
	"github.com/dome-registry/dome/pkg/errkind"
)

// LoadOptions tunes Load.
type LoadOptions struct {
	Limits Limits
	// Describe renders a file name (relative to the tool folder) for error
	// messages, e.g. "registry/tools/petstore/spec/openapi.yaml@3f2c1a9".
	// Default: the name itself.
	Describe func(name string) string
	// MaxFiles bounds how many files external references may pull in
	// (default 1000).
	MaxFiles int
	// Offer lists the flags of the calling command that error hints may
	// suggest ("--max-size").
	Offer Flags
}

// Document is an OpenAPI document loaded from a tool folder with every
// external $ref bundled into its components: a single, self-contained tree in
// which every reference is internal and resolves. Apply does not modify it,
// so one Document can be filtered with many profiles.
type Document struct {
	Root    *Value
	Version string // the "openapi" field, e.g. "3.1.0"
	File    string // the entry file, relative to the tool folder
	Files   []string
	Bundled []Bundled

	describe func(string) string
	origins  map[string]origin // by component pointer, for bundled components
}

// Bundled records one external reference target and the component it became.
type Bundled struct {
	Ref       string `json:"ref"`       // file#pointer, relative to the tool folder
	Component string `json:"component"` // #/components/<section>/<name>
}

// origin is where a bundled component came from.
type origin struct {
	File    string
	Pointer Pointer
}

// IsOpenAPI30 reports an OpenAPI 3.0.x document.
func (d *Document) IsOpenAPI30() bool { return strings.HasPrefix(d.Version, "3.0.") }

var versionRE = lazyre.New(`^3\.[01]\.\d+(-[0-9A-Za-z.-]+)?$`)

// Load reads the OpenAPI document name (YAML or JSON) through fr and bundles
// the files its external references name. Every problem is an
// *errkind.InputError naming the file and the JSON pointer (and line).
func Load(fr FileReader, name string, opts LoadOptions) (*Document, error) {
	if opts.Describe == nil {
		opts.Describe = func(s string) string { return s }
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = 1000
	}
	clean, err := cleanName(name)
	if err != nil {
		return nil, &errkind.InputError{Source: opts.Describe(name), Problem: "the spec must be a file inside the tool folder", Err: err}
	}
	root, err := loadRoot(fr, clean, opts)
	if err != nil {
		return nil, err
	}
	doc := &Document{Root: root, File: clean, describe: opts.Describe, origins: map[string]origin{}}
	if err := doc.checkOpenAPI(); err != nil {
		return nil, err
	}
	b := newBundler(fr, doc, opts)
	if err := b.run(); err != nil {
		return nil, err
	}
	if err := doc.checkRefs(); err != nil {
		return nil, err
	}
	return doc, nil
}

// loadRoot reads and parses the entry file: a YAML file from a stream when
// fr can give one, anything else read whole.
func loadRoot(fr FileReader, name string, opts LoadOptions) (*Value, error) {
	if sr, ok := fr.(streamReader); ok && isYAMLName(name) {
		r, err := sr.OpenStream(name, opts.Limits.withDefaults().MaxBytes)
		if err != nil {
			if tl := tooLargeInput(name, opts, err); tl != nil {
				return nil, tl
			}
			return nil, readError(opts.Describe(name), "", err)
		}
		defer r.Close()
		root, err := ParseYAMLReader(r, opts.Limits)
		if tl := tooLargeInput(name, opts, err); tl != nil {
			return nil, tl
		}
		if err != nil {
			var pe *parseError
			if !errors.As(err, &pe) || pe.err == nil {
				return nil, inputFromParse(opts.Describe(name), err)
			}
			return nil, readError(opts.Describe(name), "", pe.err) // the file could not be read
		}
		return root, nil
	}
	data, err := readInput(fr, name, opts)
	if err != nil {
		return nil, readError(opts.Describe(name), "", err)
	}
	root, err := parseFile(name, data, opts.Limits)
	if err != nil {
		return nil, inputFromParse(opts.Describe(name), err)
	}
	return root, nil
}

func isYAMLName(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// LoadBytes loads a self-contained document from memory (external
// references are refused as files outside the tool folder). name is used in
// messages and decides YAML or JSON by its extension.
func LoadBytes(name string, data []byte, opts LoadOptions) (*Document, error) {
	return Load(memReader{name: path.Base(name), data: data}, path.Base(name), withDescribe(opts, name))
}

func withDescribe(opts LoadOptions, name string) LoadOptions {
	if opts.Describe == nil {
		base := path.Base(name)
		opts.Describe = func(s string) string {
			if s == base {
				return name
			}
			return s
		}
	}
	return opts
}

type memReader struct {
	name string
	data []byte
}

func (m memReader) ReadFile(name string) ([]byte, error) {
	if name == m.name {
		return m.data, nil
	}
	return nil, fmt.Errorf("%s: only %s is available: %w", name, m.name, fs.ErrNotExist)
}

// parseFile parses YAML or JSON by extension; other names are sniffed.
func parseFile(name string, data []byte, lim Limits) (*Value, error) {
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		return ParseJSON(data, lim)
	case ".yaml", ".yml":
		return ParseYAML(data, lim)
	}
	trimmed := strings.TrimLeft(string(data[:min(len(data), 64)]), " \t\r\n\ufeff")
	if strings.HasPrefix(trimmed, "{") {
		if v, err := ParseJSON(data, lim); err == nil {
			return v, nil
		}
	}
	return ParseYAML(data, lim)
}

func inputFromParse(source string, err error) error {
	var pe *parseError
	if errors.As(err, &pe) {
		field := shortPointer(pe.Pointer)
		if pe.Line > 0 {
			if field != "" {
				field = fmt.Sprintf("line %d (%s)", pe.Line, field)
			} else {
				field = fmt.Sprintf("line %d", pe.Line)
			}
		}
		hint := pe.Hint
		if hint == "" {
			hint = parseHint(pe.Problem)
		}
		return &errkind.InputError{Source: source, Field: field, Problem: pe.Problem, Err: err, Hint: hint}
	}
	return &errkind.InputError{Source: source, Problem: err.Error(), Err: err}
}

// shortPointer keeps a pointer readable in a message: the head and the
// tail of a very deep one.
func shortPointer(p string) string {
	const head, tail = 60, 40
	if len(p) <= head+tail+5 {
		return p
	}
	return p[:head] + "/.../" + p[len(p)-tail:]
}

// fieldAt renders a JSON pointer with the line it is on, when known.
func fieldAt(p string, line int32) string {
	if line > 0 {
		return fmt.Sprintf("line %d (%s)", line, shortPointer(p))
	}
	return shortPointer(p)
}

func parseHint(problem string) string {
	switch {
	case strings.HasPrefix(problem, "duplicate key"):
		return "remove or rename one of the keys; JSON and YAML tools disagree on which one wins"
	case strings.Contains(problem, "alias"):
		return "expand the anchors by hand or simplify them"
	case strings.Contains(problem, "nesting deeper"):
		return "flatten the document (move nested schemas to components)"
	}
	return ""
}

func readError(source, field string, err error) error {
	if isNotExist(err) {
		return &errkind.InputError{Source: source, Field: field, Problem: "file not found", Err: err, Hint: "check the path; references are relative to the file that holds them"}
	}
	if errkind.IsInput(err) {
		return err
	}
	return &errkind.InputError{Source: source, Field: field, Problem: err.Error(), Err: err}
}

func (d *Document) checkOpenAPI() error {
	src := d.describe(d.File)
	if d.Root.Kind != KindObject {
		return &errkind.InputError{Source: src, Problem: fmt.Sprintf("not an OpenAPI document: the top level is a %s, not an object", d.Root.Kind), Hint: "give an OpenAPI 3.0 or 3.1 document"}
	}
	if d.Root.Get("swagger") != nil {
		return &errkind.InputError{Source: src, Field: "/swagger", Problem: "Swagger/OpenAPI 2.0 is not supported", Hint: "convert the document to OpenAPI 3.0 or 3.1 first"}
	}
	v, ok := d.Root.Str("openapi")
	if !ok {
		return &errkind.InputError{Source: src, Field: "/openapi", Problem: "not an OpenAPI document: no \"openapi\" version string", Hint: "give an OpenAPI 3.0 or 3.1 document (openapi: 3.1.0)"}
	}
	if !versionRE().MatchString(v) {
		return &errkind.InputError{Source: src, Field: "/openapi", Problem: fmt.Sprintf("OpenAPI version %q is not supported", v), Hint: "dome reads OpenAPI 3.0.x and 3.1.x"}
	}
	d.Version = v
	if !d.Root.Get("paths").IsObject() && !d.Root.Get("webhooks").IsObject() {
		return &errkind.InputError{Source: src, Field: "/paths", Problem: "the document has no paths (and no webhooks)", Hint: "a profile selects operations: the spec needs some"}
	}
	return nil
}

// component returns the root component at /components/<section>/<name>.
func (d *Document) component(section, name string) *Value {
	return d.Root.Get("components").Get(section).Get(name)
}

// Source renders a location in the document: the file and line it came
// from when known, for messages.
func (d *Document) location(at Pointer) (source, field string) {
	if len(at) >= 3 && at[0] == "components" {
		if o, ok := d.origins[Pointer(at[:3]).String()]; ok {
			p := append(append(Pointer{}, o.Pointer...), at[3:]...)
			return d.describe(o.File), p.String()
		}
	}
	return d.describe(d.File), at.String()
}
