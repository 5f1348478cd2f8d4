package actionpg

import "testing"

func TestURLs(t *testing.T) {
	tests := []struct {
		in, normalized, redacted string
		isURL                    bool
	}{
		{"postgres://u:pw@h:5432/db", "postgres://u:pw@h:5432/db", "postgres://u:xxxxx@h:5432/db", true},
		{"postgresql://u@h/db", "postgresql://u@h/db", "postgresql://u@h/db", true},
		{"postgresql+psycopg://u:pw@h/db", "postgresql://u:pw@h/db", "postgresql://u:xxxxx@h/db", true},
		{"POSTGRES+asyncpg://h/db?password=pw", "postgresql://h/db?password=pw", "postgresql://h/db?password=xxxxx", true},
		{"git:/srv/registry", "git:/srv/registry", "git:/srv/registry", false},
		{"mysql://u:pw@h/db", "mysql://u:pw@h/db", "mysql://u:xxxxx@h/db", false},
		{"host=h dbname=db password=pw", "host=h dbname=db password=pw", "(a connection string with a password)", false},
		{"postgres://u:pw@h/%zz", "postgres://u:pw@h/%zz", "postgres://u:xxxxx@h/%zz", true},
		{"postgres://u:p@w@h:x/db?password=pw", "postgres://u:p@w@h:x/db?password=pw", "postgres://u:xxxxx@h:x/db", true},
	}
	for _, tc := range tests {
		if got := IsURL(tc.in); got != tc.isURL {
			t.Errorf("IsURL(%q) = %v", tc.in, got)
		}
		if got := NormalizeURL(tc.in); got != tc.normalized {
			t.Errorf("NormalizeURL(%q) = %q, want %q", tc.in, got, tc.normalized)
		}
		if got := Redact(tc.in); got != tc.redacted {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.redacted)
		}
	}
}
