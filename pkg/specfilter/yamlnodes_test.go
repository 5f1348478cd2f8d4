package specfilter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/internal/yamlcore"
	yaml "go.yaml.in/yaml/v3"
)

// nodeParseYAML is the YAML reader dome had before it read the event stream
// (yamlparse.go): yaml.v3's Node tree converted to a Value. It stays as the
// oracle the differential tests and the fuzz target hold ParseYAML to.
//
// It parses one YAML document into a Value, converting it to the JSON
// data model: scalars take their YAML 1.2 core-schema types (010 is 10,
// 1_000 a string; internal/yamlcore), keys become strings, and aliases are
// expanded within a budget so that an alias bomb fails fast. Merge keys (<<),
// floats out of a double's range (1e400), duplicate keys (after conversion:
// 200 and '200' are the same key), non-scalar keys, NaN and infinities,
// custom tags, several documents and nesting beyond the limit are errors that
// name the line and the JSON pointer.
func nodeParseYAML(data []byte, lim Limits) (*Value, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return nil, &parseError{Problem: fmt.Sprintf("file is %d bytes, more than the limit of %d", len(data), lim.MaxBytes)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &parseError{Problem: "empty document"}
		}
		return nil, yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &parseError{Line: extra.Line, Problem: "more than one YAML document in the file"}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, &parseError{Problem: "empty document"}
		}
		root = root.Content[0]
	}
	c := &yamlConv{maxDepth: lim.MaxDepth, active: map[*yaml.Node]bool{}}
	c.aliasBudget = lim.MaxAliasNodes
	if c.aliasBudget <= 0 {
		c.aliasBudget = max(100000, 2*countNodes(root))
	}
	return c.convert(root)
}

func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ":"); ok {
			if l, err := strconv.Atoi(n); err == nil {
				line = l
				msg = strings.TrimSpace(tail)
			}
		}
	}
	return &parseError{Line: line, Problem: "invalid YAML: " + msg}
}

// countNodes counts the nodes as written (aliases not followed).
func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

type yamlConv struct {
	maxDepth    int
	path        []string // JSON pointer tokens of the value being converted
	aliasDepth  int      // >0 while expanding an alias
	aliasBudget int      // values that alias expansion may still create
	active      map[*yaml.Node]bool
}

func (c *yamlConv) errorf(n *yaml.Node, format string, a ...any) error {
	return &parseError{Line: n.Line, Pointer: Pointer(c.path).String(), Problem: fmt.Sprintf(format, a...)}
}

func (c *yamlConv) count(n *yaml.Node) error {
	if c.aliasDepth == 0 {
		return nil
	}
	c.aliasBudget--
	if c.aliasBudget < 0 {
		return c.errorf(n, "YAML aliases expand to too many values (an alias bomb?); dome refuses it")
	}
	return nil
}

func (c *yamlConv) convert(n *yaml.Node) (*Value, error) {
	if len(c.path) > c.maxDepth {
		return nil, c.errorf(n, "nesting deeper than %d levels", c.maxDepth)
	}
	if err := c.count(n); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.AliasNode:
		return c.alias(n, c.convert)
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.SequenceNode:
		v := &Value{Kind: KindArray, Line: int32(n.Line), Members: make([]Member, 0, len(n.Content))}
		for i, it := range n.Content {
			c.path = append(c.path, strconv.Itoa(i))
			x, err := c.convert(it)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, err
			}
			v.Members = append(v.Members, Member{Value: x})
		}
		return v, nil
	case yaml.MappingNode:
		return c.mapping(n)
	}
	return nil, c.errorf(n, "unexpected YAML node")
}

// alias expands an alias with f, refusing cycles.
func (c *yamlConv) alias(n *yaml.Node, f func(*yaml.Node) (*Value, error)) (*Value, error) {
	t := n.Alias
	if t == nil {
		return nil, c.errorf(n, "unknown YAML alias *%s", n.Value)
	}
	if c.active[t] {
		return nil, c.errorf(n, "YAML alias *%s refers to itself", n.Value)
	}
	c.active[t] = true
	c.aliasDepth++
	v, err := f(t)
	c.aliasDepth--
	delete(c.active, t)
	return v, err
}

func (c *yamlConv) mapping(n *yaml.Node) (*Value, error) {
	v := &Value{Kind: KindObject, Line: int32(n.Line), Members: make([]Member, 0, len(n.Content)/2)}
	var seen map[string]int32
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if yamlcore.IsMergeKey(kn) {
			e := yamlcore.MergeKeyError()
			return nil, &parseError{Line: kn.Line, Pointer: Pointer(c.path).String(), Problem: e.Problem, Hint: e.Hint}
		}
		key, err := c.key(kn)
		if err != nil {
			return nil, err
		}
		c.path = append(c.path, key)
		if first, dup := dupKey(v.Members, &seen, key, int32(kn.Line)); dup {
			err := c.errorf(kn, "duplicate key %q (first at line %d)", key, first)
			c.path = c.path[:len(c.path)-1]
			return nil, err
		}
		x, err := c.convert(vn)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, err
		}
		x.Line = int32(kn.Line)
		v.Members = append(v.Members, Member{Key: key, Value: x})
	}
	return v, nil
}

func (c *yamlConv) key(n *yaml.Node) (string, error) {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return "", c.errorf(n, "unknown YAML alias *%s", n.Value)
		}
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return "", c.errorf(n, "a mapping key must be a scalar; JSON has only string keys")
	}
	return n.Value, nil
}

// scalar resolves a scalar by the YAML 1.2 core schema (internal/yamlcore).
func (c *yamlConv) scalar(n *yaml.Node) (*Value, error) {
	line := int32(n.Line)
	sc, err := yamlcore.Resolve(n)
	if err != nil {
		pe := &parseError{Line: n.Line, Pointer: Pointer(c.path).String(), Problem: err.Error()}
		if ye, ok := err.(*yamlcore.Error); ok {
			pe.Hint = ye.Hint
		}
		return nil, pe
	}
	switch sc.Kind {
	case yamlcore.Null:
		return &Value{Kind: KindNull, Line: line}, nil
	case yamlcore.Bool:
		return &Value{Kind: KindBool, Bool: sc.Bool, Line: line}, nil
	case yamlcore.Number:
		if err := checkRange(sc.Text); err != nil {
			return nil, c.errorf(n, "%v", err)
		}
		return &Value{Kind: KindNumber, Text: sc.Text, Line: line}, nil
	}
	return &Value{Kind: KindString, Text: sc.Text, Line: line}, nil
}
