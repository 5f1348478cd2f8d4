package yamlevent

import (
	"io"
	"strconv"
)

// This file is dome's, not upstream's: the exported event API over the
// libyaml port that go.yaml.in/yaml/v3 keeps unexported (the other files
// are upstream's, see README.md). It lets a reader build its own tree from
// the event stream instead of yaml.v3's Node tree, which costs about ten
// times the input in memory.

// Kind is the type of an event.
type Kind uint8

// The events of a YAML stream: a stream holds documents, a document one
// node; a node is a scalar, an alias, or a sequence or mapping whose start
// and end events enclose its children (a mapping's alternate keys and
// values).
const (
	StreamStart Kind = iota + 1
	StreamEnd
	DocumentStart
	DocumentEnd
	Alias
	Scalar
	SequenceStart
	SequenceEnd
	MappingStart
	MappingEnd
	// TailComment is a comment event yaml.v3's parser emits after a block
	// mapping's value; a reader that ignores comments skips it.
	TailComment
)

// Style is how a scalar was written.
type Style uint8

// Scalar styles.
const (
	Plain Style = iota
	SingleQuoted
	DoubleQuoted
	Literal
	Folded
)

// Event is one event. Its byte slices are the parser's: valid until the
// next call to Next, and not to be modified.
type Event struct {
	Kind Kind
	// Line is the 1-based line where the event starts (yaml.v3's Node.Line).
	Line int
	// Anchor is the anchor name (Scalar, SequenceStart, MappingStart) or the
	// alias's name (Alias).
	Anchor []byte
	// Tag is the tag as the parser resolved it ("tag:yaml.org,2002:str" for
	// !!str, "!" for the non-specific tag), empty when there is none.
	Tag   []byte
	Value []byte // a scalar's value
	Style Style  // a scalar's style
	// Flow reports a flow sequence or mapping ([...] or {...}).
	Flow bool
}

// Error is a syntax error, reported as yaml.v3 reports it: Line is 0 when
// the parser does not know it. Err is the error of the reader, when reading
// failed.
type Error struct {
	Line    int
	Problem string
	Err     error
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Line > 0 {
		return "yaml: line " + strconv.Itoa(e.Line) + ": " + e.Problem
	}
	return "yaml: " + e.Problem
}

// Parser reads the events of one YAML stream.
type Parser struct {
	p   yaml_parser_t
	ev  yaml_event_t
	err error
	in  *errReader
}

// errReader keeps the reader's error, which the parser only has as text.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// NewReaderParser returns a parser that reads the stream from r as it goes
// (in small reads: give it a buffered reader), so that the input is never
// held whole.
func NewReaderParser(r io.Reader) *Parser {
	p := &Parser{in: &errReader{r: r}}
	yaml_parser_initialize(&p.p)
	yaml_parser_set_input_reader(&p.p, p.in)
	return p
}

// NewParser returns a parser over data (which it reads, never modifies).
func NewParser(data []byte) *Parser {
	p := &Parser{}
	yaml_parser_initialize(&p.p)
	if len(data) == 0 {
		data = []byte{'\n'} // as yaml.v3 does
	}
	yaml_parser_set_input_string(&p.p, data)
	return p
}

// Next reads the next event into ev. After StreamEnd, or after an error,
// it returns the same error (or StreamEnd) again.
func (p *Parser) Next(ev *Event) error {
	if p.err != nil {
		return p.err
	}
	if !yaml_parser_parse(&p.p, &p.ev) || p.p.error != yaml_NO_ERROR {
		p.err = p.fail()
		return p.err
	}
	e := &p.ev
	*ev = Event{Line: e.start_mark.line + 1, Anchor: e.anchor, Tag: e.tag}
	switch e.typ {
	case yaml_STREAM_START_EVENT:
		ev.Kind = StreamStart
	case yaml_STREAM_END_EVENT:
		ev.Kind = StreamEnd
	case yaml_DOCUMENT_START_EVENT:
		ev.Kind = DocumentStart
	case yaml_DOCUMENT_END_EVENT:
		ev.Kind = DocumentEnd
	case yaml_ALIAS_EVENT:
		ev.Kind = Alias
	case yaml_SCALAR_EVENT:
		ev.Kind = Scalar
		ev.Value = e.value
		s := e.scalar_style()
		switch {
		case s&yaml_DOUBLE_QUOTED_SCALAR_STYLE != 0:
			ev.Style = DoubleQuoted
		case s&yaml_SINGLE_QUOTED_SCALAR_STYLE != 0:
			ev.Style = SingleQuoted
		case s&yaml_LITERAL_SCALAR_STYLE != 0:
			ev.Style = Literal
		case s&yaml_FOLDED_SCALAR_STYLE != 0:
			ev.Style = Folded
		}
	case yaml_SEQUENCE_START_EVENT:
		ev.Kind = SequenceStart
		ev.Flow = e.sequence_style()&yaml_FLOW_SEQUENCE_STYLE != 0
	case yaml_SEQUENCE_END_EVENT:
		ev.Kind = SequenceEnd
	case yaml_MAPPING_START_EVENT:
		ev.Kind = MappingStart
		ev.Flow = e.mapping_style()&yaml_FLOW_MAPPING_STYLE != 0
	case yaml_MAPPING_END_EVENT:
		ev.Kind = MappingEnd
	case yaml_TAIL_COMMENT_EVENT:
		ev.Kind = TailComment
	default:
		p.err = &Error{Problem: "unexpected event " + e.typ.String()}
		return p.err
	}
	return nil
}

// fail builds the error as yaml.v3's parser.fail does.
func (p *Parser) fail() error {
	line := 0
	if p.p.context_mark.line != 0 {
		line = p.p.context_mark.line
		if p.p.error == yaml_SCANNER_ERROR { // scanner errors don't count the line yet
			line++
		}
	} else if p.p.problem_mark.line != 0 {
		line = p.p.problem_mark.line
		if p.p.error == yaml_SCANNER_ERROR {
			line++
		}
	}
	msg := p.p.problem
	if msg == "" {
		msg = "unknown problem parsing YAML content"
	}
	e := &Error{Line: line, Problem: msg}
	if p.in != nil && p.p.error == yaml_READER_ERROR {
		e.Err = p.in.err
	}
	return e
}

// ShortTag writes a resolved tag as yaml.v3's Node.Tag holds it:
// "tag:yaml.org,2002:int" becomes "!!int"; other tags stay as they are.
func ShortTag(tag []byte) string {
	const long = "tag:yaml.org,2002:"
	if len(tag) >= len(long) && string(tag[:len(long)]) == long {
		return "!!" + string(tag[len(long):])
	}
	return string(tag)
}
