package app

import "testing"

func TestTopLevelNames(t *testing.T) {
	env := &Env{Getenv: func(string) string { return "" }}
	for _, c := range topLevel() {
		if got := c.build(env).Name; got != c.name {
			t.Errorf("topLevel names %q, its constructor %q", c.name, got)
		}
	}
	if len(topLevel()) != len(newApp(env).Commands) {
		t.Errorf("topLevel and the tree differ in length")
	}
}

func TestNamedCommand(t *testing.T) {
	tests := []struct {
		args []string
		name string
		ok   bool
	}{
		{[]string{"dome", "--version"}, "", true},
		{[]string{"dome"}, "", false},
		{[]string{"dome", "--json"}, "", false},
		{[]string{"dome", "registry", "cat", "x@HEAD", "f"}, "registry", true},
		{[]string{"dome", "--repo", "registry", "spec", "filter"}, "spec", true},
		{[]string{"dome", "--repo=/r", "-q", "resolve", "x"}, "resolve", true},
		{[]string{"dome", "--help"}, "", false},
		{[]string{"dome", "help", "spec"}, "", false},
		{[]string{"dome", "completion", "bash"}, "", false},
		{[]string{"dome", "nosuch"}, "", false},
		{[]string{"dome", "--nosuch", "resolve"}, "", false},
	}
	for _, tt := range tests {
		name, ok := namedCommand(tt.args)
		if name != tt.name || ok != tt.ok {
			t.Errorf("%q: %q, %v; want %q, %v", tt.args, name, ok, tt.name, tt.ok)
		}
	}
}
