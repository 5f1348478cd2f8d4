package specfilter

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/getkin/kin-openapi/openapi3"
)

// Options tunes Apply.
type Options struct {
	// AllowEmptySelectors accepts selectors that match no operation (by
	// default an error: a typo must not silently widen or narrow a client).
	AllowEmptySelectors bool
	// Strict makes a kept operation without an operationId an error.
	Strict bool
	// NoValidate skips kin-openapi validation (for knowingly broken specs).
	// References are still checked: the output never has a dangling $ref.
	NoValidate bool
	// ValidateInput also validates the whole input document with
	// kin-openapi, not only the part the profile keeps (slower on big specs).
	ValidateInput bool
	// DeferValidation leaves the validation of the filtered spec to
	// Result.Validate, so that the caller can drop the input Document
	// first: kin-openapi's model of the output then comes on top of the
	// output alone. (ValidateInput still validates the input here.) It
	// validates the output with its descriptions shortened, so it leaves
	// no document for TakeLoaded.
	DeferValidation bool
	// Verdicts remembers the filtered specs that passed validation, by the
	// digest of their bytes, so that the same bytes are validated once.
	// Nil: validate every time.
	Verdicts VerdictCache
	// Offer lists the flags of the calling command that error hints may
	// suggest ("--no-validate", "--allow-empty-selectors"): a hint never
	// names a flag the user's command does not have.
	Offer Flags
}

// VerdictCache remembers which documents passed dome's validation, by the
// "sha256:<hex>" digest of the exact bytes validated. The verdict is a
// function of those bytes and of the validator alone, so an implementation
// must key its entries by the validator too (dome's build), and may keep
// only positive verdicts: a hit skips a check, it never changes an output.
type VerdictCache interface {
	Valid(digest string) bool
	RememberValid(digest string)
}

// Flags are command-line flags a caller offers to error hints.
type Flags []string

// Has reports whether flag is offered.
func (f Flags) Has(flag string) bool {
	for _, x := range f {
		if x == flag {
			return true
		}
	}
	return false
}

// or returns with when flag is offered, else without.
func (f Flags) or(flag, with, without string) string {
	if f.Has(flag) {
		return with
	}
	return without
}

// Result is the filtered spec and what decided it.
type Result struct {
	// JSON is filtered.openapi.json: RFC 8785 canonical JSON.
	JSON []byte
	// Digest is "sha256:<hex>" of JSON.
	Digest string
	// Operations are the kept operations (webhooks included), sorted by path
	// then method.
	Operations []Operation
	Explain    *Explain

	// loaded is the kin-openapi document validation loaded from exactly
	// JSON (an *openapi3.T kept as any: kin-openapi types stay out of this
	// package's API), handed over once by TakeLoaded.
	loaded atomic.Pointer[any]
	// pending is the validation DeferValidation left to Validate.
	pending *pendingValidation
}

type pendingValidation struct {
	opts Options
}

// Validate runs the validation that Options.DeferValidation deferred (and
// does nothing otherwise, or the second time): kin-openapi checks r.JSON,
// unless opts.Verdicts already knows it valid. It reads r.JSON with every
// description shortened (appendLeanCanonical), which gives the same verdict
// in about three quarters of the time, and reads r.JSON itself only to
// report problems word for word; so it keeps no loaded document for
// TakeLoaded. The input document is needed only to place problems in it:
// reload loads it again (the caller has usually dropped it to free its
// memory).
func (r *Result) Validate(reload func() (*Document, error)) error {
	pv := r.pending
	r.pending = nil
	if pv == nil || (pv.opts.Verdicts != nil && pv.opts.Verdicts.Valid(r.Digest)) {
		return nil
	}
	var kdoc *openapi3.T
	if lean, err := leanOf(r.JSON); err == nil {
		kdoc, _, _, _ = kinCheck(lean)
	}
	var loadErr error
	var problems []error
	var crash any
	if kdoc == nil {
		kdoc, loadErr, problems, crash = kinCheck(r.JSON)
	}
	if kdoc != nil {
		if pv.opts.Verdicts != nil {
			pv.opts.Verdicts.RememberValid(r.Digest)
		}
		return nil
	}
	doc, err := reload()
	if err != nil {
		return err
	}
	f := &filter{doc: doc, opts: pv.opts}
	return f.validationError("the filtered spec", loadErr, problems, crash)
}

// TakeLoaded returns, once, the OpenAPI document that validation loaded from
// exactly r.JSON with external references refused (a *openapi3.T of
// kin-openapi, as any), so that a generator that would load the same bytes
// again can skip the load. The caller owns it (oapi-codegen mutates what it
// is given), so later calls, and results that were not validated, get nil:
// load r.JSON then.
func (r *Result) TakeLoaded() any {
	p := r.loaded.Swap(nil)
	if p == nil {
		return nil
	}
	return *p
}

// Operation is a kept operation.
type Operation struct {
	OperationID string   `json:"operation_id,omitempty"`
	Method      string   `json:"method"`
	Path        string   `json:"path"` // the path template, or the webhook name
	Webhook     bool     `json:"webhook,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Security is the effective security: the operation's own, else the
	// document's; nil when neither says anything. Each entry is one
	// alternative: scheme name -> scopes.
	Security []map[string][]string `json:"security"`
}

// Apply filters doc with profile p: it keeps the operations the selectors
// pick, exactly the components they reach, the tags they use, applies the
// profile's servers and extension stripping, and returns the canonical
// bytes. doc is not modified.
func Apply(doc *Document, p *Profile, opts Options) (*Result, error) {
	f := &filter{doc: doc, p: p, opts: opts, ix: newIndex(doc.Root), ex: &Explain{Profile: p.ID, Spec: doc.describe(doc.File), OpenAPI: doc.Version, Bundled: doc.Bundled}}
	if err := f.selectOps(); err != nil {
		return nil, err
	}
	out, err := f.build()
	if err != nil {
		return nil, err
	}
	f.inexactNumbers(out, nil)
	canon, err := out.AppendCanonical(nil)
	if err != nil {
		return nil, fmt.Errorf("canonicalize the filtered spec: %w", err)
	}
	digest := canonical.Digest(canon)
	if !opts.NoValidate && opts.ValidateInput {
		in := doc.Root.AppendJSON(nil)
		if d := canonical.Digest(in); opts.Verdicts == nil || !opts.Verdicts.Valid(d) {
			if _, err := f.validate(in, "the input spec"); err != nil {
				return nil, err
			}
			if opts.Verdicts != nil {
				opts.Verdicts.RememberValid(d)
			}
		}
	}
	var loaded any
	if !opts.NoValidate && !opts.DeferValidation && (opts.Verdicts == nil || !opts.Verdicts.Valid(digest)) {
		kdoc, err := f.validate(canon, "the filtered spec")
		if err != nil {
			return nil, err
		}
		if opts.Verdicts != nil {
			opts.Verdicts.RememberValid(digest)
		}
		loaded = kdoc
	}
	f.ex.finish()
	sortOperations(f.kept)
	res := &Result{JSON: canon, Digest: digest, Operations: f.kept, Explain: f.ex}
	if loaded != nil {
		res.loaded.Store(&loaded)
	}
	if !opts.NoValidate && opts.DeferValidation {
		res.pending = &pendingValidation{opts: opts}
	}
	return res, nil
}

type filter struct {
	doc  *Document
	p    *Profile
	opts Options
	ix   *index
	ex   *Explain

	decided map[string]bool // by the operation's pointer (/paths/<path>/<method>) -> kept
	kept    []Operation
}

// pathOp is one operation of the input.
type pathOp struct {
	op      *Value
	ref     opRef
	at      Pointer
	webhook bool
}

// operations lists the operations under paths (or webhooks), resolving
// path items that are references.
func (f *filter) operations(section string) []pathOp {
	var out []pathOp
	m := f.doc.Root.Get(section)
	if !m.IsObject() {
		return nil
	}
	for _, pm := range m.Members {
		if section == "paths" && !strings.HasPrefix(pm.Key, "/") {
			continue
		}
		item := f.pathItem(pm.Value)
		if !item.IsObject() {
			continue
		}
		for _, method := range httpMethods {
			op := item.Get(method)
			if !op.IsObject() {
				continue
			}
			id, _ := op.Str("operationId")
			out = append(out, pathOp{
				op:      op,
				ref:     opRef{Method: strings.ToUpper(method), Path: pm.Key, ID: id, Tags: stringList(op.Get("tags"))},
				at:      Pointer{section, pm.Key, method},
				webhook: section != "paths",
			})
		}
	}
	return out
}

// pathItem follows a path item's internal $ref (a 3.1 components/pathItems entry).
func (f *filter) pathItem(v *Value) *Value {
	for range 8 {
		ref, ok := v.Str("$ref")
		if !ok {
			return v
		}
		p, ok := internalPointer(ref)
		if !ok {
			return v
		}
		t := f.ix.resolve(p)
		if t == nil {
			return v
		}
		v = t
	}
	return v
}

func stringList(v *Value) []string {
	if v == nil || v.Kind != KindArray {
		return nil
	}
	out := make([]string, 0, len(v.Members))
	for _, m := range v.Members {
		if it := m.Value; it.Kind == KindString {
			out = append(out, it.Text)
		}
	}
	return out
}

// inexactNumbers warns about integers that an IEEE 754 double cannot hold
// exactly: RFC 8785 writes them rounded (9223372036854775807 becomes
// 9223372036854776000), and so would every JSON parser that reads the output.
func (f *filter) inexactNumbers(v *Value, at Pointer) {
	switch v.Kind {
	case KindNumber:
		t := strings.TrimPrefix(v.Text, "-")
		if len(t) <= 15 || strings.ContainsAny(t, ".eE") {
			return
		}
		fl, err := strconv.ParseFloat(v.Text, 64)
		if err != nil {
			return
		}
		if exact := strconv.FormatFloat(fl, 'f', -1, 64); exact != v.Text {
			f.ex.warn(fmt.Sprintf("number %s at %s is not exact as an IEEE 754 double: RFC 8785 writes %s", v.Text, at, exact))
		}
	case KindArray:
		for i, it := range v.Members {
			f.inexactNumbers(it.Value, append(at, itoa(i)))
		}
	case KindObject:
		for _, m := range v.Members {
			f.inexactNumbers(m.Value, append(at, m.Key))
		}
	}
}

// selectOps decides every operation and checks the selectors.
func (f *filter) selectOps() error {
	f.decided = map[string]bool{}
	allow, deny, hooks := f.p.Selectors()
	uses := map[string][]int{"allow": make([]int, len(allow)), "deny": make([]int, len(deny)), "webhooks": make([]int, len(hooks))}
	for _, o := range f.operations("paths") {
		d := OperationDecision{Method: o.ref.Method, Path: o.ref.Path, OperationID: o.ref.ID}
		for i, s := range deny {
			if s.match(o.ref) {
				uses["deny"][i]++
				if d.Selector == "" {
					d.Decision, d.Selector = "deny", s.Raw
				}
			}
		}
		for i, s := range allow {
			if s.match(o.ref) {
				uses["allow"][i]++
				if d.Decision == "" && d.Selector == "" {
					d.Decision, d.Selector = "allow", s.Raw
				}
			}
		}
		switch {
		case d.Decision == "deny":
		case len(allow) == 0:
			d.Decision, d.Kept = "allow", true
			d.Selector = "(no allow list: every operation)"
		case d.Decision == "allow":
			d.Kept = true
		default:
			d.Decision = "not allowed"
		}
		if err := f.record(o, d); err != nil {
			return err
		}
		f.ex.Operations = append(f.ex.Operations, d)
	}
	var hookOps []pathOp
	for _, sec := range webhookSections {
		hookOps = append(hookOps, f.operations(sec)...)
	}
	for _, o := range hookOps {
		d := OperationDecision{Method: o.ref.Method, Path: o.ref.Path, OperationID: o.ref.ID, Decision: "not selected"}
		for i, s := range hooks {
			if s.match(o.ref) {
				uses["webhooks"][i]++
				if !d.Kept {
					d.Kept, d.Decision, d.Selector = true, "webhooks", s.Raw
				}
			}
		}
		if f.p.Webhooks == nil {
			d.Selector = "(the profile keeps no webhooks)"
		}
		if err := f.record(o, d); err != nil {
			return err
		}
		f.ex.Webhooks = append(f.ex.Webhooks, d)
	}
	var empty []string
	var field string
	for _, list := range []struct {
		name string
		sels []Selector
	}{{"allow", allow}, {"deny", deny}, {"webhooks", hooks}} {
		for i, s := range list.sels {
			f.ex.Selectors = append(f.ex.Selectors, SelectorUse{List: list.name, Selector: s.Raw, Matches: uses[list.name][i]})
			if uses[list.name][i] == 0 {
				if field == "" {
					field = fmt.Sprintf("/%s/operations/%d", list.name, i)
				}
				empty = append(empty, fmt.Sprintf("%s %q", list.name, s.Raw))
			}
		}
	}
	if len(empty) > 0 {
		msg := fmt.Sprintf("selector %s matches no operation in %s", strings.Join(empty, ", "), f.doc.describe(f.doc.File))
		if len(empty) > 1 {
			msg = fmt.Sprintf("selectors %s match no operation in %s", strings.Join(empty, ", "), f.doc.describe(f.doc.File))
		}
		if !f.opts.AllowEmptySelectors {
			return &errkind.InputError{Source: f.p.source(), Field: field, Problem: msg, Hint: f.emptyHint(allow, deny, hooks, uses)}
		}
		f.ex.warn(msg)
	}
	return nil
}

// record notes a decision; a kept operation without an operationId is a
// warning, or an error under Strict.
func (f *filter) record(o pathOp, d OperationDecision) error {
	f.decided[o.at.String()] = d.Kept
	if !d.Kept {
		return nil
	}
	if o.ref.ID == "" {
		msg := fmt.Sprintf("kept operation %s %s has no operationId; generated names will not be stable", o.ref.Method, o.ref.Path)
		if f.opts.Strict {
			src, field := f.doc.location(o.at)
			return &errkind.InputError{Source: src, Field: field, Problem: msg, Hint: "add an operationId (--strict requires one on every kept operation)"}
		}
		f.ex.warn(msg)
	}
	sec := o.op.Get("security")
	if sec == nil {
		sec = f.doc.Root.Get("security")
	}
	f.kept = append(f.kept, Operation{OperationID: o.ref.ID, Method: o.ref.Method, Path: o.ref.Path, Webhook: o.webhook, Tags: o.ref.Tags, Security: securityList(sec)})
	return nil
}

func securityList(v *Value) []map[string][]string {
	if v == nil || v.Kind != KindArray {
		return nil
	}
	out := make([]map[string][]string, 0, len(v.Members))
	for _, alt := range v.Members {
		m := map[string][]string{}
		for _, mem := range alt.Value.Members {
			m[mem.Key] = append([]string{}, stringList(mem.Value)...)
		}
		out = append(out, m)
	}
	return out
}

// emptyHint suggests what the user may have meant.
func (f *filter) emptyHint(allow, deny, hooks []Selector, uses map[string][]int) string {
	tags := map[string]bool{}
	var ids []string
	for _, sec := range []string{"paths", "webhooks", xWebhooks} {
		for _, o := range f.operations(sec) {
			for _, t := range o.ref.Tags {
				tags[t] = true
			}
			if o.ref.ID != "" {
				ids = append(ids, o.ref.ID)
			}
		}
	}
	var hints []string
	check := func(s Selector) {
		switch s.Kind {
		case ByTag:
			if len(tags) == 0 {
				hints = append(hints, "the spec's operations have no tags")
			} else {
				hints = append(hints, "tags in the spec: "+strings.Join(sortedKeys(tags), ", "))
			}
		case ByOperationID:
			var near []string
			for _, id := range ids {
				l, v := strings.ToLower(id), strings.ToLower(s.Value)
				if l == v || strings.Contains(l, v) || editDistance(l, v) <= 2 {
					near = append(near, id)
				}
			}
			if len(near) > 0 {
				hints = append(hints, fmt.Sprintf("did you mean %s?", strings.Join(near[:min(5, len(near))], ", ")))
			}
		case ByRoute:
			hints = append(hints, "path globs match the path template as written, e.g. \"GET /pets/{petId}\"; \"/pets/**\" also matches /pets")
		}
	}
	for name, sels := range map[string][]Selector{"allow": allow, "deny": deny, "webhooks": hooks} {
		for i, s := range sels {
			if uses[name][i] == 0 {
				check(s)
			}
		}
	}
	sort.Strings(hints)
	hints = dedupe(hints)
	hints = append(hints, f.opts.Offer.or("--allow-empty-selectors", "fix the profile, or pass --allow-empty-selectors", "fix the profile"))
	return strings.Join(hints, "; ")
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func dedupe(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
