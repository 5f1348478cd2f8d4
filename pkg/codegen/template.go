package codegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"github.com/dome-registry/dome/internal/lazyre"
	"github.com/dome-registry/dome/pkg/errkind"
)

// TemplateEngineVersion is the version of dome's template engine: the data
// model and the functions templates may call (see README, "Bundles").
const TemplateEngineVersion = "dome-template/v1"

// TemplateData is what every template of a bundle receives.
type TemplateData struct {
	ToolID    string
	ProfileID string
	Bundle    string
	Language  string
	SDKFlavor string
	Options   map[string]any
	Model     *Model
	Runtime   *RuntimeData
}

// funcs are the functions templates may call. They depend on nothing but
// their arguments (no clock, no environment).
func funcs(n Namer) template.FuncMap {
	return template.FuncMap{
		"camel":  func(s string) string { return Convert("camel", s) },
		"pascal": func(s string) string { return Convert("pascal", s) },
		"snake":  func(s string) string { return Convert("snake", s) },
		"screaming": func(s string) string {
			return Convert("screaming_snake", s)
		},
		"ident":    n.ident,
		"isIdent":  isIdent,
		"reserved": func(s string) bool { return n.Reserved[s] },
		// quote writes s as a double-quoted string literal that is valid in
		// JSON, TypeScript and Python (no raw control characters, no
		// template-literal syntax).
		"quote": func(s string) string {
			b, _ := json.Marshal(s)
			return string(b)
		},
		// comment makes s safe inside a line or block comment: one line, no
		// comment terminators.
		"comment": func(s string) string {
			s = strings.Join(strings.Fields(s), " ")
			return strings.NewReplacer("*/", "* /", "\"\"\"", "\" \" \"").Replace(s)
		},
		"replace": func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
		"join":    func(sep string, xs []string) string { return strings.Join(xs, sep) },
		"lower":   strings.ToLower,
		"upper":   strings.ToUpper,
		"hasPrefix": func(prefix, s string) bool {
			return strings.HasPrefix(s, prefix)
		},
		"dict": func(kv ...any) (map[string]any, error) {
			if len(kv)%2 != 0 {
				return nil, errors.New("dict takes key/value pairs")
			}
			m := map[string]any{}
			for i := 0; i < len(kv); i += 2 {
				k, ok := kv[i].(string)
				if !ok {
					return nil, errors.New("dict keys must be strings")
				}
				m[k] = kv[i+1]
			}
			return m, nil
		},
		"list": func(xs ...any) []any { return xs },
		"has": func(xs []any, x any) bool {
			for _, y := range xs {
				if y == x {
					return true
				}
			}
			return false
		},
		"add": func(a, b int) int { return a + b },
		"last": func(i int, n any) bool {
			switch v := n.(type) {
			case []*Param:
				return i == len(v)-1
			case []*Property:
				return i == len(v)-1
			case []*Type:
				return i == len(v)-1
			case []string:
				return i == len(v)-1
			}
			return false
		},
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		"sortedKeys": func(m map[string][]string) []string {
			ks := make([]string, 0, len(m))
			for k := range m {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			return ks
		},
		"option": func(opts map[string]any, key string) any { return opts[key] },
	}
}

var identRE = lazyre.New(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func isIdent(s string) bool { return identRE().MatchString(s) && !strings.Contains(s, "$") }

// renderTemplates runs a template bundle over data. Template problems are
// input errors naming the bundle file and the line.
func renderTemplates(b *Bundle, data *TemplateData, n Namer) ([]GeneratedFile, error) {
	root := template.New("").Funcs(funcs(n)).Option("missingkey=error")
	for _, p := range b.Spec.Partials {
		src, err := b.File(p)
		if err != nil {
			return nil, err
		}
		if _, err := root.New(p).Parse(string(src)); err != nil {
			return nil, templateError(b, p, err)
		}
	}
	var out []GeneratedFile
	for _, o := range b.Spec.Outputs {
		if o.Template == "" {
			continue // the engine writes it
		}
		src, err := b.File(o.Template)
		if err != nil {
			return nil, err
		}
		t, err := root.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.New(o.Template).Parse(string(src)); err != nil {
			return nil, templateError(b, o.Template, err)
		}
		var buf bytes.Buffer
		if err := t.ExecuteTemplate(&buf, o.Template, data); err != nil {
			return nil, templateError(b, o.Template, err)
		}
		out = append(out, GeneratedFile{Path: o.Path, Data: NormalizeText(buf.Bytes())})
	}
	return out, nil
}

// tmplLine finds "name:LINE" in a text/template error.
var tmplLine = lazyre.New(`template: ([^:]+):(\d+)(?::\d+)?: (.*)$`)

func templateError(b *Bundle, name string, err error) error {
	msg := err.Error()
	field := ""
	if m := tmplLine().FindStringSubmatch(msg); m != nil {
		name, field, msg = m[1], "line "+m[2], m[3]
	}
	return &errkind.InputError{
		Source:  b.Source(name),
		Field:   field,
		Problem: "template failed: " + msg,
		Hint:    fmt.Sprintf("fix the template in bundle %s (check it with: dome gen ... --lang %s)", b.Spec.ID, b.Spec.Language),
		Err:     err,
	}
}

// NormalizeText applies dome.norm/v1 to generated text: LF line endings,
// no trailing blanks, no leading blank lines, at most two blank lines in a
// row, exactly one final newline.
func NormalizeText(in []byte) []byte {
	s := strings.ReplaceAll(string(in), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	var out []string
	blanks := 2 // drop leading blank lines
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blanks >= 2 || len(out) == 0 {
				continue
			}
			blanks++
			out = append(out, "")
			continue
		}
		blanks = 0
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return []byte(strings.Join(out, "\n") + "\n")
}
