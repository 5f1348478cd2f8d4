package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/app"
)

// TestReferenceIsCurrent fails when docs/reference/ or docs/man/ differ from
// what the CLI definitions say: a command, flag or help text changed without
// `make docs`.
func TestReferenceIsCurrent(t *testing.T) {
	pages, err := Render(app.DocApp(), app.GlobalFlagNames())
	if err != nil {
		t.Fatal(err)
	}
	stale, err := Stale(filepath.Join("..", "..", "..", ".."), pages)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("%s\n%s", strings.Join(stale, "\n"), RegenerateHint)
	}
}

func TestRender_Deterministic(t *testing.T) {
	a, err := Render(app.DocApp(), app.GlobalFlagNames())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Render(app.DocApp(), app.GlobalFlagNames())
	if len(a) != len(b) {
		t.Fatalf("%d pages, then %d", len(a), len(b))
	}
	for k := range a {
		if !bytes.Equal(a[k], b[k]) {
			t.Errorf("%s differs between two renders", k)
		}
	}
	for _, want := range []string{"docs/reference/README.md", "docs/reference/dome-stack.md", "docs/man/dome.1", "docs/man/dome-stack.1"} {
		if _, ok := a[want]; !ok {
			t.Errorf("no page %s", want)
		}
	}
}

func TestStale_NamesMissingChangedAndLeftoverPages(t *testing.T) {
	root := t.TempDir()
	pages := map[string][]byte{"docs/reference/a.md": []byte("a\nb\n"), "docs/reference/b.md": []byte("b\n")}
	if err := Write(root, pages); err != nil {
		t.Fatal(err)
	}
	if s, _ := Stale(root, pages); len(s) != 0 {
		t.Fatalf("fresh pages are stale: %v", s)
	}
	os.WriteFile(filepath.Join(root, "docs/reference/a.md"), []byte("a\nc\n"), 0o644)
	os.Remove(filepath.Join(root, "docs/reference/b.md"))
	os.WriteFile(filepath.Join(root, "docs/man/old.1"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(root, "docs/man"), 0o755)
	os.WriteFile(filepath.Join(root, "docs/man/old.1"), []byte("x"), 0o644)
	s, err := Stale(root, pages)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(s, "\n")
	for _, want := range []string{`docs/reference/a.md: differs from the CLI (line 2: checked in "c", the CLI says "b")`, "docs/reference/b.md: missing", "docs/man/old.1: no command documents it any more"} {
		if !strings.Contains(got, want) {
			t.Errorf("stale report lacks %q:\n%s", want, got)
		}
	}
	// Write brings the folder back in line, leftover included.
	if err := Write(root, pages); err != nil {
		t.Fatal(err)
	}
	if s, _ := Stale(root, pages); len(s) != 0 {
		t.Fatalf("after Write: %v", s)
	}
}

func TestMdSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"reads <tool@ref> and <path>", "reads `<tool@ref>` and `<path>`"},
		{"already `<tool@ref>` quoted", "already `<tool@ref>` quoted"},
		{"a < b and c > d", "a < b and c > d"},
		{"```\n<kept> in a fence\n```", "```\n<kept> in a fence\n```"},
	} {
		if got := mdSafe(c.in); got != c.want {
			t.Errorf("mdSafe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
