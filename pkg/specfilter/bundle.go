package specfilter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// bundler moves the targets of external references into the root
// document's components: each (file, pointer, kind) becomes one component,
// named after the pointer's last token or the file; names that clash (with
// each other or with a root component) all get a short digest suffix, so a
// name never depends on the order in which references were found.
type bundler struct {
	fr    FileReader
	doc   *Document
	opts  LoadOptions
	files map[string]*Value

	targets map[targetKey]*target
	queue   []*target
	sites   []refSite
	err     error
}

type targetKey struct {
	file, ptr string
	kind      objKind
}

type target struct {
	key   targetKey
	value *Value // a private copy of the target
	name  string // component name
	want  string
}

// refSite is a place whose reference must be rewritten to a target.
type refSite struct {
	holder *Value // the object holding the key
	key    string // "$ref", or a discriminator mapping key
	target *target
}

func newBundler(fr FileReader, doc *Document, opts LoadOptions) *bundler {
	return &bundler{fr: fr, doc: doc, opts: opts, files: map[string]*Value{doc.File: doc.Root}, targets: map[targetKey]*target{}}
}

// bundleVisitor walks one file's content.
type bundleVisitor struct {
	b    *bundler
	file string
}

func (bv bundleVisitor) object(v *Value, k objKind, at Pointer) bool {
	b := bv.b
	if b.err != nil {
		return false
	}
	if refable(k) {
		if ref, ok := v.Str("$ref"); ok {
			b.ref(bv.file, v, "$ref", ref, k, at)
		}
	}
	switch k {
	case kDiscriminator:
		if m := v.Get("mapping"); m.IsObject() {
			for _, mem := range m.Members {
				if mem.Value.Kind == KindString && isMappingRef(mem.Value.Text) {
					b.ref(bv.file, m, mem.Key, mem.Value.Text, kSchema, at.Child("mapping", mem.Key))
				}
			}
		}
	case kLink:
		if ref, ok := v.Str("operationRef"); ok {
			t, err := parseRef(bv.file, ref)
			switch {
			case err != nil:
				b.fail(bv.file, at.Child("operationRef"), v.Line, err.Error(), "")
			case t.File != b.doc.File:
				b.fail(bv.file, at.Child("operationRef"), v.Line, "operationRef points into another file; dome bundles one document", "use operationId, or a pointer into this document")
			}
		}
	}
	return b.err == nil
}

// isMappingRef tells a discriminator mapping value that is a reference from
// one that is a schema name.
func isMappingRef(s string) bool { return strings.ContainsAny(s, "#/") || path.Ext(s) != "" }

func (b *bundler) fail(file string, at Pointer, line int32, problem, hint string) {
	if b.err == nil {
		b.err = &errkind.InputError{Source: b.opts.Describe(file), Field: fieldAt(at.String(), line), Problem: problem, Hint: hint}
	}
}

func (b *bundler) ref(file string, holder *Value, key, ref string, k objKind, at Pointer) {
	field := at
	if key == "$ref" {
		field = at.Child("$ref")
	}
	t, err := parseRef(file, ref)
	if err != nil {
		b.fail(file, field, holder.Line, fmt.Sprintf("$ref %q: %v", ref, err), "references may name files inside the tool folder only, relative to the file that holds them")
		return
	}
	if t.File == b.doc.File {
		if file != b.doc.File {
			// A reference back into the entry document becomes internal.
			holder.Set(key, newString("#"+t.Pointer.String()))
		}
		return // internal references are checked once bundling is done
	}
	tk := targetKey{file: t.File, ptr: t.Pointer.String(), kind: k}
	tg := b.targets[tk]
	if tg == nil {
		tg, err = b.load(tk, t, file, fieldAt(field.String(), holder.Line))
		if err != nil {
			if b.err == nil {
				b.err = err
			}
			return
		}
		b.targets[tk] = tg
		b.queue = append(b.queue, tg)
	}
	b.sites = append(b.sites, refSite{holder: holder, key: key, target: tg})
}

func (b *bundler) load(tk targetKey, t refTarget, from string, field string) (*target, error) {
	src := b.opts.Describe(from)
	root, ok := b.files[t.File]
	if !ok {
		if len(b.files) >= b.opts.MaxFiles {
			return nil, &errkind.InputError{Source: src, Field: field, Problem: fmt.Sprintf("references pull in more than %d files", b.opts.MaxFiles)}
		}
		data, err := readInput(b.fr, t.File, b.opts)
		if err != nil {
			if errkind.IsInput(err) {
				return nil, err
			}
			if isNotExist(err) {
				return nil, &errkind.InputError{Source: src, Field: field, Problem: fmt.Sprintf("$ref target %s: file not found", t.File), Err: err, Hint: "references are relative to the file that holds them and must stay inside the tool folder"}
			}
			return nil, &errkind.InputError{Source: src, Field: field, Problem: fmt.Sprintf("$ref target %s: %v", t.File, err), Err: err}
		}
		root, err = parseFile(t.File, data, b.opts.Limits)
		if err != nil {
			return nil, inputFromParse(b.opts.Describe(t.File), err)
		}
		b.files[t.File] = root
	}
	v := root.Resolve(t.Pointer)
	if v == nil {
		return nil, &errkind.InputError{Source: src, Field: field, Problem: fmt.Sprintf("$ref target %s#%s does not exist", t.File, t.Pointer), Hint: "fix the pointer or add the object to " + t.File}
	}
	return &target{key: tk, value: v.Copy(), want: wantName(t)}, nil
}

// wantName is the component name a target asks for.
func wantName(t refTarget) string {
	var name string
	if n := len(t.Pointer); n > 0 && !allDigits(t.Pointer[n-1]) {
		name = t.Pointer[n-1]
	} else {
		base := path.Base(t.File)
		name = strings.TrimSuffix(base, path.Ext(base))
		for _, tok := range t.Pointer {
			name += "_" + tok
		}
	}
	return sanitizeName(name)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// sanitizeName keeps a component name within ^[a-zA-Z0-9._-]+$.
func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "Component"
	}
	return string(b)
}

func (b *bundler) run() error {
	walk(b.doc.Root, kDocument, nil, bundleVisitor{b: b, file: b.doc.File})
	for len(b.queue) > 0 && b.err == nil {
		tg := b.queue[0]
		b.queue = b.queue[1:]
		at, _ := ParsePointer(tg.key.ptr)
		walk(tg.value, tg.key.kind, at, bundleVisitor{b: b, file: tg.key.file})
	}
	if b.err != nil {
		return b.err
	}
	if len(b.targets) == 0 {
		b.doc.Files = []string{b.doc.File}
		return nil
	}
	b.name()
	for _, s := range b.sites {
		s.holder.Set(s.key, newString("#"+Pointer{"components", componentSection(s.target.key.kind), s.target.name}.String()))
	}
	comps := b.doc.Root.Get("components")
	if comps == nil {
		comps = newObject()
		b.doc.Root.Set("components", comps)
	} else if comps.Kind != KindObject {
		return &errkind.InputError{Source: b.opts.Describe(b.doc.File), Field: "/components", Problem: "components is not an object"}
	}
	all := b.sorted()
	for _, tg := range all {
		section := componentSection(tg.key.kind)
		sec := comps.Get(section)
		if sec == nil {
			sec = newObject()
			comps.Set(section, sec)
		} else if sec.Kind != KindObject {
			return &errkind.InputError{Source: b.opts.Describe(b.doc.File), Field: "/components/" + section, Problem: fmt.Sprintf("components/%s is not an object", section)}
		}
		sec.Members = append(sec.Members, Member{Key: tg.name, Value: tg.value})
		ptr := Pointer{"components", section, tg.name}.String()
		at, _ := ParsePointer(tg.key.ptr)
		b.doc.origins[ptr] = origin{File: tg.key.file, Pointer: at}
		b.doc.Bundled = append(b.doc.Bundled, Bundled{Ref: tg.key.file + "#" + tg.key.ptr, Component: "#" + ptr})
	}
	files := []string{}
	for f := range b.files {
		if f != b.doc.File {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	b.doc.Files = append([]string{b.doc.File}, files...)
	sort.Slice(b.doc.Bundled, func(i, j int) bool { return b.doc.Bundled[i].Component < b.doc.Bundled[j].Component })
	return nil
}

func (b *bundler) sorted() []*target {
	all := make([]*target, 0, len(b.targets))
	for _, t := range b.targets {
		all = append(all, t)
	}
	sort.Slice(all, func(i, j int) bool {
		x, y := all[i].key, all[j].key
		if x.kind != y.kind {
			return x.kind < y.kind
		}
		if x.file != y.file {
			return x.file < y.file
		}
		return x.ptr < y.ptr
	})
	return all
}

// name assigns component names: a target keeps the name it wants when no
// other target of its section wants it and the root has no such component;
// otherwise every contender gets name_<8 hex of sha256(file#pointer)>.
func (b *bundler) name() {
	groups := map[string][]*target{}
	for _, t := range b.targets {
		k := componentSection(t.key.kind) + "\x00" + t.want
		groups[k] = append(groups[k], t)
	}
	taken := map[string]bool{}
	for _, g := range groups {
		section := componentSection(g[0].key.kind)
		if len(g) == 1 && b.doc.component(section, g[0].want) == nil {
			g[0].name = g[0].want
			taken[section+"\x00"+g[0].want] = true
		}
	}
	for _, t := range b.sorted() {
		if t.name != "" {
			continue
		}
		section := componentSection(t.key.kind)
		sum := sha256.Sum256([]byte(t.key.file + "#" + t.key.ptr))
		h := hex.EncodeToString(sum[:])
		for n := 8; ; n += 4 {
			name := t.want + "_" + h[:min(n, len(h))]
			if !taken[section+"\x00"+name] && b.doc.component(section, name) == nil {
				t.name = name
				taken[section+"\x00"+name] = true
				break
			}
		}
	}
}
