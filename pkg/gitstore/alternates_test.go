package gitstore

import "testing"

func TestUnquoteC(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`:             "plain",
		`"with space"`:        "with space",
		`"a\"b\\c"`:           `a"b\c`,
		`"tab\there\nnl"`:     "tab\there\nnl",
		`"\303\251t\303\251"`: "été",
		`"\a\b\f\r\v"`:        "\a\b\f\r\v",
		`""`:                  "",
	} {
		if got, ok := unquoteC(in); !ok || got != want {
			t.Errorf("unquoteC(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{`"unterminated`, `"trailing" x`, `"\q"`, `"\4000"`, `"\12"`, `plain`, `"`, `"\`} {
		if got, ok := unquoteC(bad); ok {
			t.Errorf("unquoteC(%s) = %q, want a refusal", bad, got)
		}
	}
}
