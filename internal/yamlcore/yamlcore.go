// Package yamlcore reads YAML scalars by the YAML 1.2 core schema (YAML
// 1.2.2, section 10.3), the one rule every YAML reader of dome follows:
// specs, profiles and agents.md frontmatter.
//
// The YAML library (go.yaml.in/yaml/v3) resolves plain scalars with a mix of
// YAML 1.1 and 1.2 rules: 010 reads as 8, 08 as a float, 1_000 as 1000,
// 0b101 as 5, 1e400 silently as a string, and << as a merge key. A parser
// differential between dome and the tools a spec's author uses is how a
// reviewed document comes to mean something else, so dome resolves plain
// scalars itself:
//
//	null, Null, NULL, ~, (empty)              null
//	true, True, TRUE, false, False, FALSE     boolean
//	[-+]?[0-9]+                               integer, decimal (010 is 10)
//	0o[0-7]+                                  integer, octal
//	0x[0-9a-fA-F]+                            integer, hexadecimal
//	[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?   float
//	[-+]?(\.inf|\.Inf|\.INF), \.nan|\.NaN|\.NAN             refused: not JSON
//	anything else                             string (1_000, 0b101, yes, 2024-05-01)
//
// A float beyond the range of an IEEE 754 double (1e400) is refused, as is
// a merge key (a plain <<: YAML 1.2 has none; write the keys out).
package yamlcore

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Kind is the JSON type of a resolved scalar.
type Kind uint8

const (
	Null Kind = iota + 1
	Bool
	Number
	String
)

// Scalar is a resolved scalar: its kind and, for numbers, a JSON number
// literal (integers in decimal, floats as written when already JSON).
type Scalar struct {
	Kind Kind
	Bool bool
	Text string // the number literal, or the string
}

// Error is a scalar (or key) the core schema refuses; Problem says why
// and Hint what to write instead.
type Error struct {
	Problem string
	Hint    string
}

func (e *Error) Error() string { return e.Problem }

func fail(hint, format string, a ...any) *Error {
	return &Error{Problem: fmt.Sprintf(format, a...), Hint: hint}
}

// IsMergeKey reports a plain "<<" key: a YAML 1.1 merge key, which dome
// refuses (YAML 1.2 has none, and tools disagree on how it merges).
func IsMergeKey(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && IsMergeKeyScalar(n.Value, n.Style, n.Tag)
}

// IsMergeKeyScalar is IsMergeKey for a scalar given by its value, style and
// tag (as yaml.v3's Node holds them), for readers of the event stream.
func IsMergeKeyScalar(value string, style yaml.Style, tag string) bool {
	return value == "<<" && style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 &&
		(style&yaml.TaggedStyle == 0 || tag == "!!merge")
}

// MergeKeyError is the refusal of a merge key.
func MergeKeyError() *Error {
	return fail("write the keys out in full (YAML 1.2 has no merge keys)", "YAML merge keys (<<) are not supported")
}

// Resolve resolves a scalar node. Quoted and block scalars are strings;
// explicit tags are honoured for the core types (!!str, !!int, !!float,
// !!bool, !!null; the text must then be of that type) and !!binary and
// !!timestamp read as their text; any other tag is refused.
func Resolve(n *yaml.Node) (Scalar, error) {
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != "" {
		return ResolveScalar(n.Value, n.Style, n.ShortTag())
	}
	return ResolveScalar(n.Value, n.Style, n.Tag)
}

// ResolveScalar is Resolve for a scalar given by its value, style and tag as
// yaml.v3's Node holds them (the tag in its short form, "!!int", and only
// with TaggedStyle), for readers of the event stream.
func ResolveScalar(value string, style yaml.Style, tag string) (Scalar, error) {
	if style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 && style&yaml.TaggedStyle == 0 {
		return Scalar{Kind: String, Text: value}, nil
	}
	if style&yaml.TaggedStyle == 0 || tag == "" {
		return Plain(value)
	}
	switch tag {
	case "!!str", "!!binary", "!!timestamp":
		return Scalar{Kind: String, Text: value}, nil
	case "!!null", "!!bool", "!!int", "!!float":
		s, err := Plain(value)
		if err != nil {
			return s, err
		}
		want := map[string]Kind{"!!null": Null, "!!bool": Bool, "!!int": Number, "!!float": Number}[tag]
		if s.Kind != want || (tag == "!!int" && !isInt(value)) {
			return Scalar{}, fail("remove the tag or fix the value", "%q is not a valid %s", value, tag)
		}
		return s, nil
	}
	return Scalar{}, fail("remove the tag", "YAML tag %s is not supported", tag)
}

// Plain resolves the text of a plain (unquoted, untagged) scalar.
func Plain(s string) (Scalar, error) {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return Scalar{Kind: Null}, nil
	case "true", "True", "TRUE":
		return Scalar{Kind: Bool, Bool: true}, nil
	case "false", "False", "FALSE":
		return Scalar{Kind: Bool}, nil
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
		return Scalar{}, fail("quote it if it is text; JSON has no NaN or infinities", "%s is not a JSON number", s)
	}
	c := s[0]
	if !(c >= '0' && c <= '9') && c != '-' && c != '+' && c != '.' {
		return Scalar{Kind: String, Text: s}, nil // the common case, decided on one byte
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x') {
		digits, base := s[2:], 8
		if s[1] == 'x' {
			base = 16
		}
		var b big.Int
		if !allDigits(digits, base) {
			return Scalar{Kind: String, Text: s}, nil
		}
		b.SetString(digits, base)
		return Scalar{Kind: Number, Text: b.String()}, nil
	}
	if isInt(s) {
		return Scalar{Kind: Number, Text: decimal(s)}, nil
	}
	if isFloat(s) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
			return Scalar{}, fail("write a number a JSON parser can read as a double, or quote it if it is text", "%s is out of the range of a JSON number (an IEEE 754 double)", s)
		}
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return Scalar{Kind: String, Text: s}, nil
		}
		return Scalar{Kind: Number, Text: floatLiteral(s, f)}, nil
	}
	return Scalar{Kind: String, Text: s}, nil
}

// isInt matches [-+]?[0-9]+.
func isInt(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	return allDigits(s, 10)
}

// isFloat matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?.
func isFloat(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
		if exp != "" && (exp[0] == '-' || exp[0] == '+') {
			exp = exp[1:]
		}
		if exp == "" || !allDigits(exp, 10) {
			return false
		}
	}
	whole, frac, dot := strings.Cut(mant, ".")
	switch {
	case !dot:
		return whole != "" && allDigits(whole, 10)
	case whole == "":
		return frac != "" && allDigits(frac, 10)
	default:
		return allDigits(whole, 10) && (frac == "" || allDigits(frac, 10))
	}
}

func allDigits(s string, base int) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := false
		switch {
		case c >= '0' && c <= '9':
			ok = int(c-'0') < base
		case base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')):
			ok = true
		}
		if !ok {
			return false
		}
	}
	return true
}

// decimal writes a decimal integer as JSON: no "+", no leading zeros.
func decimal(s string) string {
	neg := s[0] == '-'
	t := strings.TrimLeft(strings.TrimLeft(s, "+-"), "0")
	if t == "" {
		return "0"
	}
	if neg {
		return "-" + t
	}
	return t
}

// floatLiteral keeps a float's text when it is already a JSON number
// (1.50 stays 1.50; canonicalization decides the output form), else the
// shortest form of its value (.5 -> 0.5, +1. -> 1).
func floatLiteral(text string, f float64) string {
	if jsonNumber(text) {
		return text
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// jsonNumber reports whether s is a JSON number (RFC 8259).
func jsonNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	i := 0
	if s[0] == '0' {
		i = 1
	} else {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return false
		}
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}
