package agentlock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/internal/yamlcore"
	"github.com/dome-registry/dome/pkg/schemaval"
	yaml "go.yaml.in/yaml/v3"
)

// Limits on agents.md: the frontmatter is a few dozen lines; anything far
// larger is refused before YAML parsing.
const (
	maxAgentsBytes = 1 << 20
	maxYAMLDepth   = 64
)

// frontmatter is the YAML between a first line "---" and the next line
// "---" (or "..."), with the file line number of its first line.
type frontmatter struct {
	text      []byte
	firstLine int
}

func splitFrontmatter(file string, data []byte) (frontmatter, *Diagnostic) {
	if len(data) > maxAgentsBytes {
		return frontmatter{}, &Diagnostic{File: file, Problem: fmt.Sprintf("file is %d bytes, more than the limit of %d", len(data), maxAgentsBytes)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if string(bytes.TrimRight(first, " \t\r")) != "---" {
		return frontmatter{}, &Diagnostic{File: file, Line: 1, Column: 1, Problem: "no YAML frontmatter: the first line must be ---",
			Hint: "start the file with a frontmatter block: ---, name, version, requires.mcp (category, permissions), then --- before the Markdown"}
	}
	start := len(first) + 1
	for pos := start; pos <= len(data); {
		l, next := data[pos:], len(data)+1
		if i := bytes.IndexByte(l, '\n'); i >= 0 {
			l, next = l[:i], pos+i+1
		}
		if t := string(bytes.TrimRight(l, " \t\r")); t == "---" || t == "..." {
			return frontmatter{text: data[start:pos], firstLine: 2}, nil
		}
		pos = next
	}
	return frontmatter{}, &Diagnostic{File: file, Line: 1, Column: 1, Problem: "the frontmatter that starts on line 1 is never closed",
		Hint: "end the frontmatter with a line --- before the Markdown body"}
}

// yamlValue converts the frontmatter to the JSON data model (maps, slices,
// strings, json.Number, bools, nil) and records the position of every value
// by JSON pointer. It refuses aliases, merge keys, custom tags, non-string
// keys, duplicate keys, NaN and infinities, and nesting beyond maxYAMLDepth.
func yamlValue(file string, fm frontmatter) (any, map[string]schemaval.Position, *Diagnostic) {
	// YAML refuses tabs in indentation and the parser reports the line
	// where the enclosing block starts; name the line with the tab instead.
	for i, l := range bytes.Split(fm.text, []byte("\n")) {
		indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		if j := bytes.IndexByte(indent, '\t'); j >= 0 && len(bytes.TrimSpace(l)) > 0 {
			return nil, nil, &Diagnostic{File: file, Line: fm.firstLine + i, Column: j + 1, Problem: "invalid YAML: a tab in the indentation", Hint: "indent with spaces"}
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(fm.text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, &Diagnostic{File: file, Line: fm.firstLine, Problem: "the frontmatter is empty", Hint: "declare at least name, version and requires.mcp"}
		}
		return nil, nil, yamlDiag(file, fm.firstLine, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	c := &yamlConv{file: file, lineOff: fm.firstLine - 1, pos: map[string]schemaval.Position{}}
	v, d := c.convert(root, "", 0)
	if d != nil {
		return nil, nil, d
	}
	c.pos[""] = c.at(root)
	return v, c.pos, nil
}

func yamlDiag(file string, firstLine int, err error) *Diagnostic {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ":"); ok {
			if l, err := strconv.Atoi(n); err == nil {
				line = l + firstLine - 1
				msg = strings.TrimSpace(tail)
			}
		}
	}
	// The parser reports where the enclosing block or bracket starts, which
	// can be a line or two above the fault.
	return &Diagnostic{File: file, Line: line, Problem: "invalid YAML (at or after this line): " + msg, Hint: "indent with spaces, close every [ and {, quote values that contain ': ' or start with a special character"}
}

type yamlConv struct {
	file    string
	lineOff int
	pos     map[string]schemaval.Position
	path    []string
}

func (c *yamlConv) at(n *yaml.Node) schemaval.Position {
	return schemaval.Position{Line: n.Line + c.lineOff, Column: n.Column}
}

func (c *yamlConv) fail(n *yaml.Node, problem, hint string) *Diagnostic {
	p := c.at(n)
	return &Diagnostic{File: c.file, Line: p.Line, Column: p.Column, Field: fieldPath(c.path), Problem: problem, Hint: hint}
}

func (c *yamlConv) convert(n *yaml.Node, ptr string, depth int) (any, *Diagnostic) {
	if depth > maxYAMLDepth {
		return nil, c.fail(n, fmt.Sprintf("nesting deeper than %d levels", maxYAMLDepth), "")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nil, c.fail(n, "YAML aliases (*"+n.Value+") are not supported in the frontmatter", "write the value out in full")
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, it := range n.Content {
			child := ptr + "/" + strconv.Itoa(i)
			c.path = append(c.path, strconv.Itoa(i))
			c.pos[child] = c.at(it)
			x, d := c.convert(it, child, depth+1)
			c.path = c.path[:len(c.path)-1]
			if d != nil {
				return nil, d
			}
			out = append(out, x)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			if kn.Kind != yaml.ScalarNode {
				return nil, c.fail(kn, "a key must be a plain string", "")
			}
			if yamlcore.IsMergeKey(kn) {
				e := yamlcore.MergeKeyError()
				return nil, c.fail(kn, e.Problem, e.Hint)
			}
			key := kn.Value
			child := ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
			c.path = append(c.path, key)
			if _, dup := out[key]; dup {
				d := c.fail(kn, fmt.Sprintf("duplicate key %q (first at line %d)", key, c.pos[child].Line), "keep one of them")
				c.path = c.path[:len(c.path)-1]
				return nil, d
			}
			c.pos[child+keySuffix] = c.at(kn)
			// A scalar is placed at its value, a container at its key.
			if vn.Kind == yaml.ScalarNode {
				c.pos[child] = c.at(vn)
			} else {
				c.pos[child] = c.at(kn)
			}
			x, d := c.convert(vn, child, depth+1)
			c.path = c.path[:len(c.path)-1]
			if d != nil {
				return nil, d
			}
			out[key] = x
		}
		return out, nil
	}
	return nil, c.fail(n, "unexpected YAML node", "")
}

// scalar resolves a scalar by the YAML 1.2 core schema (internal/yamlcore),
// as every YAML reader of dome does: 010 is 10, 1_000 and 2024-05-01 are
// strings, 1e400 and .inf are refused.
func (c *yamlConv) scalar(n *yaml.Node) (any, *Diagnostic) {
	sc, err := yamlcore.Resolve(n)
	if err != nil {
		hint := ""
		if ye, ok := err.(*yamlcore.Error); ok {
			hint = ye.Hint
		}
		return nil, c.fail(n, err.Error(), hint)
	}
	switch sc.Kind {
	case yamlcore.Null:
		return nil, nil
	case yamlcore.Bool:
		return sc.Bool, nil
	case yamlcore.Number:
		return json.Number(sc.Text), nil
	}
	return sc.Text, nil
}
