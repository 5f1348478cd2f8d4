package specfilter

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/canonical"
)

// Property tests: random profiles over real documents (the example registry
// always, the Stripe spec in ../shared/data when present). Each run checks
// the invariants of issue 4: byte-identical output across runs and input key
// order, idempotence, operation set = allow minus deny, every $ref
// resolves, no orphan component or tag, valid OpenAPI.

const stripeSpec = "../../../shared/data/stripe-spec3-2023-08.yaml"

type corpusDoc struct {
	name string
	doc  *Document
}

func exampleDocs(t *testing.T) []corpusDoc {
	t.Helper()
	var out []corpusDoc
	tools, _ := filepath.Glob("../../registry/tools/*/tool.json")
	for _, tj := range tools {
		dir := filepath.Dir(tj)
		var tool struct{ Spec string }
		data, _ := os.ReadFile(tj)
		if err := json.Unmarshal(data, &tool); err != nil {
			t.Fatal(err)
		}
		fr, err := OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Load(fr, tool.Spec, LoadOptions{})
		fr.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, corpusDoc{filepath.Base(dir), doc})
	}
	out = append(out, corpusDoc{"shop", loadShop(t)})
	return out
}

// randomProfile builds a profile whose selectors all match something.
func randomProfile(r *rand.Rand, doc *Document) *Profile {
	f := &filter{doc: doc, ix: newIndex(doc.Root)}
	ops := f.operations("paths")
	pick := func() string {
		o := ops[r.IntN(len(ops))].ref
		switch r.IntN(5) {
		case 0:
			if o.ID != "" {
				return o.ID
			}
		case 1:
			if len(o.Tags) > 0 {
				return "tag:" + o.Tags[r.IntN(len(o.Tags))]
			}
		case 2:
			if segs := strings.Split(o.Path, "/"); len(segs) > 2 {
				return "* " + strings.Join(segs[:3], "/") + "/**"
			}
		case 3:
			return "* " + o.Path
		}
		return o.Method + " " + o.Path
	}
	list := func(n int) []string {
		seen := map[string]bool{}
		var out []string
		for i := 0; i < n; i++ {
			if s := pick(); !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
		return out
	}
	body := map[string]any{"schema_version": ProfileSchemaVersion, "id": "random"}
	if n := r.IntN(6); n > 0 {
		body["allow"] = map[string]any{"operations": list(n)}
	}
	if n := r.IntN(3); n > 0 {
		body["deny"] = map[string]any{"operations": list(n)}
	}
	if r.IntN(3) == 0 {
		body["strip_extensions"] = []string{"x-"}
	}
	data, _ := json.Marshal(body)
	p, err := ParseProfile("random.profile.json", data)
	if err != nil {
		panic(err)
	}
	return p
}

// shuffled returns a copy of v with every object's members in random order.
func shuffled(r *rand.Rand, v *Value) *Value {
	c := v.Copy()
	var mix func(*Value)
	mix = func(x *Value) {
		if x.Kind == KindObject {
			r.Shuffle(len(x.Members), func(i, j int) { x.Members[i], x.Members[j] = x.Members[j], x.Members[i] })
		}
		for _, m := range x.Members {
			mix(m.Value)
		}
	}
	mix(c)
	return c
}

func checkInvariants(t *testing.T, r *rand.Rand, name string, doc *Document, p *Profile, validate bool) {
	t.Helper()
	opts := Options{NoValidate: !validate}
	res, err := Apply(doc, p, opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	// The bytes are RFC 8785 canonical (a fixpoint of pkg/canonical) and the digest is theirs.
	if c, err := canonical.Transform(res.JSON); err != nil || string(c) != string(res.JSON) || res.Digest != canonical.Digest(res.JSON) {
		t.Fatalf("%s: the output is not canonical JSON or its digest is wrong (%v)", name, err)
	}
	// Same bytes again, and with the input's keys in another order.
	again, err := Apply(doc, p, opts)
	if err != nil || string(again.JSON) != string(res.JSON) {
		t.Fatalf("%s: a second run gave other bytes (%v)", name, err)
	}
	d2 := *doc
	d2.Root = shuffled(r, doc.Root)
	mixed, err := Apply(&d2, p, opts)
	if err != nil || string(mixed.JSON) != string(res.JSON) {
		t.Fatalf("%s: reordering the input's keys changed the output (%v)", name, err)
	}
	// The operation set is exactly allow minus deny.
	allow, deny, _ := p.Selectors()
	f := &filter{doc: doc, ix: newIndex(doc.Root)}
	var want []string
	for _, o := range f.operations("paths") {
		allowed := len(allow) == 0
		for _, s := range allow {
			allowed = allowed || s.match(o.ref)
		}
		denied := false
		for _, s := range deny {
			denied = denied || s.match(o.ref)
		}
		if allowed && !denied {
			want = append(want, o.ref.Method+" "+o.ref.Path)
		}
	}
	out, err := ParseJSON(res.JSON, Limits{})
	if err != nil {
		t.Fatalf("%s: output is not JSON: %v", name, err)
	}
	var got []string
	for _, pm := range out.Get("paths").membersOrNil() {
		for _, m := range httpMethods {
			if pm.Value.Get(m) != nil {
				got = append(got, strings.ToUpper(m)+" "+pm.Key)
			}
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: operations %v, want allow minus deny %v", name, got, want)
	}
	checkClosed(t, name, out)
	// Idempotent: the output filtered again with the same profile is the same.
	// (Deny selectors now match nothing, by construction.)
	outDoc, err := LoadBytes("filtered.openapi.json", res.JSON, LoadOptions{})
	if err != nil {
		t.Fatalf("%s: reloading the output: %v", name, err)
	}
	o2 := opts
	o2.AllowEmptySelectors = true
	res2, err := Apply(outDoc, p, o2)
	if err != nil || string(res2.JSON) != string(res.JSON) {
		t.Fatalf("%s: filtering the output again changed it (%v)", name, err)
	}
}

// checkClosed checks, without the filter's own walker, that every "$ref"
// resolves and that every component and tag is used.
func checkClosed(t *testing.T, name string, out *Value) {
	t.Helper()
	reached := map[string]bool{}
	var queue []string
	var scan func(v *Value)
	mark := func(ptr string) {
		if !reached[ptr] {
			reached[ptr] = true
			queue = append(queue, ptr)
		}
	}
	scan = func(v *Value) {
		if v.Kind == KindObject {
			if ref, ok := v.Str("$ref"); ok {
				p, ok := internalPointer(ref)
				if !ok || out.Resolve(p) == nil {
					t.Fatalf("%s: $ref %q does not resolve", name, ref)
				}
				if len(p) >= 3 && p[0] == "components" {
					mark(Pointer(p[:3]).String())
				}
			}
			if d := v.Get("discriminator"); d.IsObject() {
				for _, m := range d.Get("mapping").membersOrNil() {
					if p, ok := internalPointer(m.Value.Text); ok && len(p) >= 3 {
						mark(Pointer(p[:3]).String())
					} else {
						mark(Pointer{"components", "schemas", m.Value.Text}.String())
					}
				}
			}
			for _, m := range v.Members {
				if m.Key == "security" && m.Value.Kind == KindArray {
					for _, alt := range m.Value.Members {
						for _, s := range alt.Value.membersOrNil() {
							mark(Pointer{"components", "securitySchemes", s.Key}.String())
						}
					}
				}
				scan(m.Value)
			}
		}
		if v.Kind == KindArray {
			for _, it := range v.Members {
				scan(it.Value)
			}
		}
	}
	usedTags := map[string]bool{}
	top := &Value{Kind: KindObject}
	for _, m := range out.Members {
		if m.Key != "components" {
			top.Members = append(top.Members, m)
		}
	}
	scan(top)
	for _, m := range out.Members {
		if m.Key == "paths" || m.Key == "webhooks" {
			for _, pm := range m.Value.membersOrNil() {
				for _, op := range pm.Value.membersOrNil() {
					for _, tg := range stringList(op.Value.Get("tags")) {
						usedTags[tg] = true
					}
				}
			}
		}
	}
	for len(queue) > 0 {
		p, _ := ParsePointer(queue[0])
		queue = queue[1:]
		if v := out.Resolve(p); v != nil {
			scan(v)
		}
	}
	for _, sec := range out.Get("components").membersOrNil() {
		if strings.HasPrefix(sec.Key, "x-") {
			continue
		}
		for _, c := range sec.Value.membersOrNil() {
			if ptr := (Pointer{"components", sec.Key, c.Key}).String(); !reached[ptr] {
				t.Fatalf("%s: orphan component %s", name, ptr)
			}
		}
	}
	for _, tg := range out.Get("tags").itemsOrNil() {
		if n, _ := tg.Value.Str("name"); !usedTags[n] {
			t.Fatalf("%s: unused tag %s kept", name, n)
		}
	}
}

func TestInvariants_ExampleRegistry(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for _, cd := range exampleDocs(t) {
		for i := 0; i < 25; i++ {
			p := randomProfile(r, cd.doc)
			checkInvariants(t, r, fmt.Sprintf("%s/profile-%d", cd.name, i), cd.doc, p, i%5 == 0)
		}
	}
	// GitHub's spec: x-webhooks, $refs in example values; its own examples
	// fail kin-openapi's validation, so the invariants run unvalidated.
	gh := loadGitHub(t)
	for i := 0; i < 25; i++ {
		checkInvariants(t, r, fmt.Sprintf("github/profile-%d", i), gh, randomProfile(r, gh), false)
	}
}

func TestInvariants_TwentyRunsSameBytes(t *testing.T) {
	for _, cd := range exampleDocs(t) {
		p := &Profile{ID: "all"}
		var first string
		for i := 0; i < 20; i++ {
			// Load again each time: nothing may carry over between runs.
			res, err := Apply(cd.doc, p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = string(res.JSON)
			} else if string(res.JSON) != first {
				t.Fatalf("%s: run %d differs", cd.name, i)
			}
		}
	}
}

func TestInvariants_Stripe(t *testing.T) {
	if _, err := os.Stat(stripeSpec); err != nil {
		t.Skipf("the Stripe spec is not here (%s): skipping the property test over it", stripeSpec)
	}
	fr, err := OpenDir(filepath.Dir(stripeSpec))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	doc, err := Load(fr, filepath.Base(stripeSpec), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 6
	if testing.Short() {
		n = 2
	}
	r := rand.New(rand.NewPCG(8, 2023))
	for i := 0; i < n; i++ {
		checkInvariants(t, r, fmt.Sprintf("stripe/profile-%d", i), doc, randomProfile(r, doc), i == 0)
	}
}
