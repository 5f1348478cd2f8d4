package specfilter

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/internal/yamlcore"
	"github.com/dome-registry/dome/internal/yamlevent"
	"github.com/dome-registry/dome/pkg/readlimit"
	yaml "go.yaml.in/yaml/v3"
)

// ParseYAML parses one YAML document into a Value, converting it to the JSON
// data model: scalars take their YAML 1.2 core-schema types (010 is 10,
// 1_000 a string; internal/yamlcore), keys become strings, and aliases are
// expanded within a budget so that an alias bomb fails fast. Merge keys (<<),
// floats out of a double's range (1e400), duplicate keys (after conversion:
// 200 and '200' are the same key), non-scalar keys, NaN and infinities,
// custom tags, several documents and nesting beyond the limit are errors that
// name the line and the JSON pointer.
//
// It builds the Value straight from yaml.v3's event stream
// (internal/yamlevent) rather than from yaml.v3's Node tree, which would
// hold about ten times the input in memory beside the Value. It reads the
// same documents the same way as that conversion did (yamlnodes_test.go
// keeps it as the oracle of a differential test and a fuzz target) and
// reports errors in the same order: a syntax error anywhere in the first
// two documents first, then a second document, then the first problem of
// the conversion in document order.
func ParseYAML(data []byte, lim Limits) (*Value, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return nil, &parseError{Problem: fmt.Sprintf("file is %d bytes, more than the limit of %d", len(data), lim.MaxBytes)}
	}
	return newYAMLBuilder(yamlevent.NewParser(data), lim).run()
}

// ParseYAMLReader is ParseYAML reading the document from r as it parses, so
// that the input is never held whole; more than Limits.MaxBytes is an
// error that wraps a *readlimit.TooLargeError.
func ParseYAMLReader(r io.Reader, lim Limits) (*Value, error) {
	lim = lim.withDefaults()
	br := bufio.NewReaderSize(readlimit.Reader(r, lim.MaxBytes), 64<<10)
	v, err := newYAMLBuilder(yamlevent.NewReaderParser(br), lim).run()
	var tl *readlimit.TooLargeError
	if errors.As(err, &tl) {
		return nil, &parseError{Problem: fmt.Sprintf("file is more than the limit of %d bytes", lim.MaxBytes), err: tl}
	}
	return v, err
}

func newYAMLBuilder(p *yamlevent.Parser, lim Limits) *yamlBuilder {
	return &yamlBuilder{
		p:          p,
		maxDepth:   lim.MaxDepth,
		aliasLimit: int64(lim.MaxAliasNodes),
		anchors:    map[string]*yamlAnchor{},
	}
}

// yamlAnchor is an anchored node. A collection is aliased by copying its
// Value once the whole document is read and the aliases' budget checked; a
// scalar is kept as written and resolved where an alias uses it (a key's
// text is not resolved, so an alias can be the first to resolve it).
type yamlAnchor struct {
	open   bool  // its node is being read: an alias to it refers to itself
	depth  int   // its depth (the length of its JSON pointer)
	line   int32 // its node's own line
	value  *Value
	scalar bool
	text   string
	style  yaml.Style
	tag    string
	// size is how many values an alias to it adds (keys not counted, an
	// alias inside it counting itself and its target's size), and height
	// how many levels it has below itself.
	size   int64
	height int
}

// yamlFrame is a sequence or mapping being read. Its children wait in the
// builder's scratch stacks until it ends, so that each collection gets one
// slice of exactly its size.
type yamlFrame struct {
	v       *Value
	anchor  *yamlAnchor
	start   int    // where its children begin in the scratch stack
	n       int    // children so far
	key     string // a mapping's key waiting for its value
	keyLine int32
	hasKey  bool
	seen    map[string]int32 // a mapping's keys, once it has many
	size    int64
	height  int
}

// yamlAliasUse is an alias: one to a collection is expanded once the
// document is read and the budget checked; one to a scalar is only kept
// when it may be where the budget runs out.
type yamlAliasUse struct {
	ph     *Value // the placeholder in the tree, overwritten by the copy; nil for a scalar
	target *yamlAnchor
	total  int64 // values added by aliases so far, this one included
	line   int32
	at     string // JSON pointer
}

type yamlBuilder struct {
	p          *yamlevent.Parser
	ev         yamlevent.Event
	maxDepth   int
	aliasLimit int64

	frames  []yamlFrame
	members []Member // scratch: children of the open collections (items with empty keys)
	root    *Value

	nodes   int64 // nodes written in the first document
	aliases []yamlAliasUse
	added   int64
	anchors map[string]*yamlAnchor
	arena   docArena

	failed error // the first conversion problem; reading goes on for syntax errors
}

func (b *yamlBuilder) run() (*Value, error) {
	docs, extraLine := 0, 0
	for {
		if err := b.p.Next(&b.ev); err != nil {
			return nil, syntaxError(err)
		}
		ev := &b.ev
		switch ev.Kind {
		case yamlevent.StreamStart, yamlevent.TailComment, yamlevent.SequenceEnd, yamlevent.MappingEnd:
			if docs == 1 && b.failed == nil && (ev.Kind == yamlevent.SequenceEnd || ev.Kind == yamlevent.MappingEnd) {
				b.end()
			}
			continue
		case yamlevent.DocumentStart:
			docs++
			if docs == 2 {
				extraLine = ev.Line
			}
			continue
		case yamlevent.DocumentEnd:
			if docs == 2 {
				return nil, &parseError{Line: extraLine, Problem: "more than one YAML document in the file"}
			}
			continue
		case yamlevent.StreamEnd:
			if docs == 0 {
				return nil, &parseError{Problem: "empty document"}
			}
			return b.finish()
		}
		// A node: Scalar, Alias, SequenceStart or MappingStart.
		if ev.Kind == yamlevent.Alias {
			if b.anchors[string(ev.Anchor)] == nil {
				// yaml.v3 fails here, without a line.
				return nil, &parseError{Problem: fmt.Sprintf("invalid YAML: unknown anchor '%s' referenced", ev.Anchor)}
			}
		}
		if docs != 1 || b.failed != nil {
			if docs == 1 {
				b.nodes++
			}
			if len(ev.Anchor) > 0 && ev.Kind != yamlevent.Alias {
				b.anchors[string(ev.Anchor)] = &yamlAnchor{}
			}
			continue
		}
		b.nodes++
		if err := b.node(); err != nil {
			b.failed = err
		}
	}
}

// finish checks the aliases' budget and expands them.
func (b *yamlBuilder) finish() (*Value, error) {
	budget := max(b.minBudget(), 2*b.nodes)
	if b.aliasLimit > 0 {
		budget = b.aliasLimit
	}
	for _, u := range b.aliases {
		if u.total > budget {
			return nil, &parseError{Line: int(u.line), Pointer: u.at, Problem: "YAML aliases expand to too many values (an alias bomb?); dome refuses it"}
		}
	}
	if b.failed != nil {
		return nil, b.failed
	}
	// In document order: a target's own aliases come before any alias to it,
	// so they are expanded by the time it is copied.
	for _, u := range b.aliases {
		if u.ph == nil {
			continue
		}
		c := u.target.value.Copy()
		c.Line = u.ph.Line
		*u.ph = *c
	}
	return b.root, nil
}

// minBudget is the least the aliases' budget can be: Limits.MaxAliasNodes,
// else max(100000, 2 x the nodes written in the document).
func (b *yamlBuilder) minBudget() int64 {
	if b.aliasLimit > 0 {
		return b.aliasLimit
	}
	return 100000
}

func syntaxError(err error) error {
	if e, ok := err.(*yamlevent.Error); ok {
		return &parseError{Line: e.Line, Problem: "invalid YAML: " + e.Problem, err: e.Err}
	}
	return &parseError{Problem: "invalid YAML: " + err.Error()}
}

// pointer renders the JSON pointer of the frames[:n] positions: each
// mapping's waiting key, each sequence's next index.
func (b *yamlBuilder) pointer(n int, extra ...string) string {
	var s strings.Builder
	for _, f := range b.frames[:n] {
		s.WriteByte('/')
		if f.v.Kind == KindObject {
			s.WriteString(escapeToken(f.key))
		} else {
			s.WriteString(strconv.Itoa(f.n))
		}
	}
	for _, t := range extra {
		s.WriteByte('/')
		s.WriteString(escapeToken(t))
	}
	return s.String()
}

// tokens returns the positions of frames[from:] as pointer tokens.
func (b *yamlBuilder) tokens(from int) []string {
	var out []string
	for i := from; i < len(b.frames); i++ {
		f := &b.frames[i]
		if f.v.Kind == KindObject {
			out = append(out, f.key)
		} else {
			out = append(out, strconv.Itoa(f.n))
		}
	}
	return out
}

func (b *yamlBuilder) errorAt(line int, at string, format string, a ...any) error {
	return &parseError{Line: line, Pointer: at, Problem: fmt.Sprintf(format, a...)}
}

// node reads one node event of the first document.
func (b *yamlBuilder) node() error {
	ev := &b.ev
	var top *yamlFrame
	if n := len(b.frames); n > 0 {
		top = &b.frames[n-1]
	}
	if top != nil && top.v.Kind == KindObject && !top.hasKey {
		return b.key(top)
	}
	depth := len(b.frames)
	if depth > b.maxDepth {
		return b.errorAt(ev.Line, b.pointer(depth), "nesting deeper than %d levels", b.maxDepth)
	}
	switch ev.Kind {
	case yamlevent.Scalar:
		style, tag := scalarStyle(ev)
		text := b.arena.text(ev.Value)
		if len(ev.Anchor) > 0 {
			b.anchors[string(ev.Anchor)] = &yamlAnchor{depth: depth, line: int32(ev.Line), scalar: true, text: text, style: style, tag: tag, size: 1}
		}
		v, err := b.scalar(text, style, tag, int32(ev.Line), depth)
		if err != nil {
			return err
		}
		b.attach(v, 1, 0)
	case yamlevent.Alias:
		return b.alias(depth)
	case yamlevent.SequenceStart, yamlevent.MappingStart:
		v := b.arena.value()
		v.Kind, v.Line = KindArray, int32(ev.Line)
		f := yamlFrame{v: v, start: len(b.members), size: 1}
		if ev.Kind == yamlevent.MappingStart {
			v.Kind = KindObject
		}
		if len(ev.Anchor) > 0 {
			f.anchor = &yamlAnchor{open: true, depth: depth, line: int32(ev.Line)}
			b.anchors[string(ev.Anchor)] = f.anchor
		}
		b.frames = append(b.frames, f)
	}
	return nil
}

// key reads a mapping key: a scalar, taken as written (never resolved), or
// an alias of one.
func (b *yamlBuilder) key(top *yamlFrame) error {
	ev := &b.ev
	mapAt := func() string { return b.pointer(len(b.frames) - 1) }
	var key string
	switch ev.Kind {
	case yamlevent.Scalar:
		style, tag := scalarStyle(ev)
		if len(ev.Value) == 2 && ev.Value[0] == '<' && ev.Value[1] == '<' && yamlcore.IsMergeKeyScalar("<<", style, tag) {
			e := yamlcore.MergeKeyError()
			return &parseError{Line: ev.Line, Pointer: mapAt(), Problem: e.Problem, Hint: e.Hint}
		}
		key = b.arena.text(ev.Value)
		if len(ev.Anchor) > 0 {
			b.anchors[string(ev.Anchor)] = &yamlAnchor{depth: len(b.frames), line: int32(ev.Line), scalar: true, text: key, style: style, tag: tag, size: 1}
		}
	case yamlevent.Alias:
		t := b.anchors[string(ev.Anchor)]
		if !t.scalar {
			return b.errorAt(int(t.line), mapAt(), "a mapping key must be a scalar; JSON has only string keys")
		}
		key = t.text
	default:
		return b.errorAt(ev.Line, mapAt(), "a mapping key must be a scalar; JSON has only string keys")
	}
	line := int32(ev.Line)
	if first, dup := dupKey(b.members[top.start:], &top.seen, key, line); dup {
		return b.errorAt(ev.Line, b.pointer(len(b.frames)-1, key), "duplicate key %q (first at line %d)", key, first)
	}
	top.key, top.keyLine, top.hasKey = key, line, true
	return nil
}

func scalarStyle(ev *yamlevent.Event) (yaml.Style, string) {
	var style yaml.Style
	switch ev.Style {
	case yamlevent.DoubleQuoted:
		style = yaml.DoubleQuotedStyle
	case yamlevent.SingleQuoted:
		style = yaml.SingleQuotedStyle
	case yamlevent.Literal:
		style = yaml.LiteralStyle
	case yamlevent.Folded:
		style = yaml.FoldedStyle
	}
	if len(ev.Tag) == 0 || (len(ev.Tag) == 1 && ev.Tag[0] == '!') {
		return style, "" // yaml.v3 takes the non-specific tag as none
	}
	return style | yaml.TaggedStyle, yamlevent.ShortTag(ev.Tag)
}

// scalar resolves a scalar by the YAML 1.2 core schema (internal/yamlcore).
func (b *yamlBuilder) scalar(text string, style yaml.Style, tag string, line int32, depth int) (*Value, error) {
	sc, err := yamlcore.ResolveScalar(text, style, tag)
	if err != nil {
		pe := &parseError{Line: int(line), Pointer: b.pointer(depth), Problem: err.Error()}
		if ye, ok := err.(*yamlcore.Error); ok {
			pe.Hint = ye.Hint
		}
		return nil, pe
	}
	v := b.arena.value()
	v.Line = line
	switch sc.Kind {
	case yamlcore.Null:
		v.Kind = KindNull
	case yamlcore.Bool:
		v.Kind, v.Bool = KindBool, sc.Bool
	case yamlcore.Number:
		if err := checkRange(sc.Text); err != nil {
			return nil, b.errorAt(int(line), b.pointer(depth), "%v", err)
		}
		v.Kind, v.Text = KindNumber, sc.Text
	default:
		v.Kind, v.Text = KindString, sc.Text
	}
	return v, nil
}

// alias reads an alias in a value's place.
func (b *yamlBuilder) alias(depth int) error {
	ev := &b.ev
	t := b.anchors[string(ev.Anchor)]
	if t.open {
		// The alias is inside its own anchor: expanding it would meet
		// itself again at the same place inside the copy.
		at := b.pointer(depth) + Pointer(b.tokens(t.depth)).String()
		return b.errorAt(ev.Line, at, "YAML alias *%s refers to itself", ev.Anchor)
	}
	if t.scalar {
		v, err := b.scalar(t.text, t.style, t.tag, t.line, depth)
		if err != nil {
			return err
		}
		b.added = addSat(b.added, 1)
		if b.added > b.minBudget() {
			b.aliases = append(b.aliases, yamlAliasUse{target: t, total: b.added, line: int32(ev.Line), at: b.pointer(depth)})
		}
		b.attach(v, 2, 0)
		return nil
	}
	if depth+t.height > b.maxDepth {
		return b.errorAt(ev.Line, b.pointer(depth), "nesting deeper than %d levels (through the alias *%s)", b.maxDepth, ev.Anchor)
	}
	b.added = addSat(b.added, t.size)
	ph := b.arena.value()
	ph.Line = t.line
	b.aliases = append(b.aliases, yamlAliasUse{ph: ph, target: t, total: b.added, line: int32(ev.Line), at: b.pointer(depth)})
	b.attach(ph, addSat(1, t.size), t.height)
	return nil
}

// end closes the innermost open sequence or mapping.
func (b *yamlBuilder) end() {
	f := b.frames[len(b.frames)-1]
	b.frames = b.frames[:len(b.frames)-1]
	f.v.Members = b.arena.copyMembers(b.members[f.start:])
	clear(b.members[f.start:])
	b.members = b.members[:f.start]
	if a := f.anchor; a != nil {
		a.open, a.value, a.size, a.height = false, f.v, f.size, f.height
	}
	b.attach(f.v, f.size, f.height)
}

// attach adds a complete value to the open collection (or makes it the
// root); cost is what it adds to an enclosing anchor's size (the
// placeholder of an alias counts itself and its target).
func (b *yamlBuilder) attach(v *Value, cost int64, height int) {
	if len(b.frames) == 0 {
		b.root = v
		return
	}
	top := &b.frames[len(b.frames)-1]
	top.size = addSat(top.size, cost)
	top.n++
	top.height = max(top.height, height+1)
	if top.v.Kind == KindObject {
		v.Line = top.keyLine
		b.members = append(b.members, Member{Key: top.key, Value: v})
		top.hasKey = false
		return
	}
	b.members = append(b.members, Member{Value: v})
}

// addSat adds without overflowing: an alias bomb's sizes grow
// exponentially.
func addSat(a, b int64) int64 {
	const limit = 1 << 62
	if a > limit-b {
		return limit
	}
	return a + b
}
