package gitstore_test

import (
	"testing"

	"github.com/dome-registry/dome/pkg/gitstore"
)

func TestIsURL(t *testing.T) {
	for s, want := range map[string]bool{
		"file:///tmp/x": true, "https://example.com/r.git": true, "ssh://git@h/r": true,
		"git://127.0.0.1:9418/r": true, "git@github.com:org/repo.git": true,
		"/tmp/x": false, "./repo": false, "repo": false, "C:/x": false,
	} {
		if got := gitstore.IsURL(s); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", s, got, want)
		}
	}
}
