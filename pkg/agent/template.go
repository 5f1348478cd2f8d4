package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Templates: prompts, delegated tasks and the strings of a tool input may
// hold placeholders, replaced when the step runs:
//
//	{{task}}             the task the workflow runs
//	{{agent}}            the id of the agent running it
//	{{steps.ID.output}}  the output of step ID (a JSON string as its text,
//	                     any other JSON value as compact JSON)
//
// Spaces inside the braces are allowed. Any other text between {{ and }}
// is left as it is, so prompts may quote other template languages.

// placeholder is one parsed placeholder.
type placeholder struct {
	start, end int    // byte offsets of {{ and after }}
	name       string // "task", "agent" or "steps"
	step       string // for "steps"
}

// placeholders finds the placeholders of s; a {{ that starts like one
// (task, agent, steps.) but is not one is an error.
func placeholders(s string) ([]placeholder, error) {
	var out []placeholder
	for i := 0; ; {
		j := strings.Index(s[i:], "{{")
		if j < 0 {
			return out, nil
		}
		start := i + j
		k := strings.Index(s[start+2:], "}}")
		inner := ""
		if k >= 0 {
			inner = strings.TrimSpace(s[start+2 : start+2+k])
		} else {
			inner = strings.TrimSpace(s[start+2:])
		}
		word := inner
		if n := strings.IndexAny(word, ". \t\n}"); n >= 0 {
			word = word[:n]
		}
		if word != "task" && word != "agent" && word != "steps" {
			i = start + 2
			continue
		}
		if k < 0 {
			return nil, fmt.Errorf("placeholder %q is not closed with }}", bounded(s[start:], 40))
		}
		end := start + 2 + k + 2
		p := placeholder{start: start, end: end, name: word}
		switch {
		case inner == "task" || inner == "agent":
		case strings.HasPrefix(inner, "steps."):
			rest := strings.TrimPrefix(inner, "steps.")
			id, field, ok := strings.Cut(rest, ".")
			if !ok || id == "" || field != "output" {
				return nil, fmt.Errorf("placeholder {{%s}}: write {{steps.STEP_ID.output}}", inner)
			}
			p.step = id
		default:
			return nil, fmt.Errorf("placeholder {{%s}}: want {{task}}, {{agent}} or {{steps.STEP_ID.output}}", inner)
		}
		out = append(out, p)
		i = end
	}
}

// templateVars are the values placeholders take.
type templateVars struct {
	task, agent string
	output      func(step string) (json.RawMessage, bool)
}

// render replaces the placeholders of s.
func render(s string, v templateVars) (string, error) {
	ps, err := placeholders(s)
	if err != nil || len(ps) == 0 {
		return s, err
	}
	var b strings.Builder
	last := 0
	for _, p := range ps {
		b.WriteString(s[last:p.start])
		switch p.name {
		case "task":
			b.WriteString(v.task)
		case "agent":
			b.WriteString(v.agent)
		case "steps":
			out, ok := v.output(p.step)
			if !ok {
				return "", fmt.Errorf("{{steps.%s.output}}: step %q has no output", p.step, p.step)
			}
			b.WriteString(OutputText(out))
		}
		last = p.end
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// OutputText is a step output as text: a JSON string's value, any other
// value as compact JSON.
func OutputText(out json.RawMessage) string {
	var s string
	if len(out) > 0 && out[0] == '"' && json.Unmarshal(out, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, out) == nil {
		return buf.String()
	}
	return string(out)
}

// renderJSON replaces the placeholders in every string of a JSON value
// (object keys stay as written).
func renderJSON(in json.RawMessage, v templateVars) (json.RawMessage, error) {
	if len(in) == 0 {
		return json.RawMessage("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	y, err := renderValue(x, v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(y)
}

func renderValue(x any, v templateVars) (any, error) {
	switch t := x.(type) {
	case string:
		return render(t, v)
	case []any:
		for i := range t {
			r, err := renderValue(t[i], v)
			if err != nil {
				return nil, err
			}
			t[i] = r
		}
	case map[string]any:
		for k := range t {
			r, err := renderValue(t[k], v)
			if err != nil {
				return nil, err
			}
			t[k] = r
		}
	}
	return x, nil
}

// jsonStrings calls f with the JSON pointer and value of every string in a
// JSON value, in a stable order.
func jsonStrings(in json.RawMessage, f func(ptr, s string) error) error {
	if len(in) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return err
	}
	var walk func(x any, ptr string) error
	walk = func(x any, ptr string) error {
		switch t := x.(type) {
		case string:
			return f(ptr, t)
		case []any:
			for i, e := range t {
				if err := walk(e, fmt.Sprintf("%s/%d", ptr, i)); err != nil {
					return err
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if err := walk(t[k], ptr+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(x, "")
}

func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
