package webui

import (
	"html/template"
	"net/url"
	"strconv"
	"strings"
)

// funcs are the templates' helpers; none of them marks text as safe HTML.
func funcs() template.FuncMap {
	return template.FuncMap{
		"short":  short,
		"join":   strings.Join,
		"add":    func(a, b int) int { return a + b },
		"itoa":   strconv.Itoa,
		"i64":    func(n int64) string { return strconv.FormatInt(n, 10) },
		"plural": plural,
		"yesno": func(b bool, yes, no string) string {
			if b {
				return yes
			}
			return no
		},
		"lower": strings.ToLower,
		"runAt": runAtURL,
		"dict":  dict,
		"seg":   url.PathEscape,
	}
}

// short abbreviates a commit id or digest for display (the full value is
// always in the link or the title).
func short(s string) string {
	if rest, ok := strings.CutPrefix(s, "sha256:"); ok && len(rest) > 12 {
		return "sha256:" + rest[:12]
	}
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func dict(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok {
			m[k] = kv[i+1]
		}
	}
	return m
}
