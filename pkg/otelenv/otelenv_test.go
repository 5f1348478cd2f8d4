package otelenv

import "testing"

func TestTracesURL(t *testing.T) {
	for _, c := range []struct{ traces, base, want string }{
		{"", "http://localhost:4318", "http://localhost:4318/v1/traces"},
		{"", "http://localhost:4318/", "http://localhost:4318/v1/traces"},
		{"https://otel.example:4318/custom", "http://ignored", "https://otel.example:4318/custom"},
		{"", "", ""},
	} {
		got, err := TracesURL(c.traces, c.base)
		if err != nil || got != c.want {
			t.Errorf("TracesURL(%q, %q) = %q, %v; want %q", c.traces, c.base, got, err, c.want)
		}
	}
	for _, bad := range []string{"localhost:4318", "file:///etc/passwd", "http://", "ftp://x/v1/traces"} {
		if _, err := TracesURL(bad, ""); err == nil {
			t.Errorf("%q is accepted", bad)
		}
	}
	env := map[string]string{EnvEndpoint: "http://c:4318"}
	if got, err := FromEnv(func(k string) string { return env[k] }); err != nil || got != "http://c:4318/v1/traces" {
		t.Errorf("FromEnv: %q %v", got, err)
	}
}
