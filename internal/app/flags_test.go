package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestInterspersed(t *testing.T) {
	a := &cli.App{
		Flags: globalFlags(),
		Commands: []*cli.Command{
			{Name: "resolve", Flags: withGlobal(&cli.StringFlag{Name: "profile"}, &cli.BoolFlag{Name: "pinned"})},
			{Name: "registry", Subcommands: []*cli.Command{{Name: "cat", Flags: withGlobal()}}},
		},
	}
	tests := []struct {
		in, want []string
	}{
		{[]string{"dome"}, []string{"dome"}},
		{[]string{"dome", "resolve", "t@main", "--json"}, []string{"dome", "resolve", "--json", "--", "t@main"}},
		{[]string{"dome", "--repo", "x", "resolve", "t@main", "--profile", "p@v", "--pinned"},
			[]string{"dome", "--repo", "x", "resolve", "--profile", "p@v", "--pinned", "--", "t@main"}},
		{[]string{"dome", "resolve", "--profile=p@v", "t@main"}, []string{"dome", "resolve", "--profile=p@v", "--", "t@main"}},
		{[]string{"dome", "registry", "cat", "t@main", "spec/x", "--repo", "r"},
			[]string{"dome", "registry", "cat", "--repo", "r", "--", "t@main", "spec/x"}},
		{[]string{"dome", "resolve", "--", "--odd"}, []string{"dome", "resolve", "--", "--odd"}},
		{[]string{"dome", "resolve", "-"}, []string{"dome", "resolve", "--", "-"}},
		// A command line after "--" stays as it is, flags and all.
		{[]string{"dome", "registry", "cat", "--", "sh", "-c", "x"}, []string{"dome", "registry", "cat", "--", "sh", "-c", "x"}},
		{[]string{"dome", "registry", "cat", "--repo", "r", "--", "sh", "-c", "x"}, []string{"dome", "registry", "cat", "--repo", "r", "--", "sh", "-c", "x"}},
	}
	for _, tt := range tests {
		if got, err := interspersed(a, tt.in); err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("interspersed(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// A flag that takes a value but has none is a usage error naming the flag,
// not a flag whose value is the next word ("--", "--json").
func TestInterspersed_FlagWithoutValue_IsUsageError(t *testing.T) {
	a := &cli.App{
		Flags:    globalFlags(),
		Commands: []*cli.Command{{Name: "resolve", Flags: withGlobal(&cli.StringFlag{Name: "profile"})}},
	}
	for _, in := range [][]string{
		{"dome", "resolve", "t@main", "--profile"},
		{"dome", "resolve", "--profile", "--", "t@main"},
		{"dome", "resolve", "t@main", "--profile", "--json"},
		{"dome", "--repo"},
		{"dome", "--repo", "--json", "resolve"},
	} {
		got, err := interspersed(a, in)
		if err == nil || !isUsage(err) {
			t.Errorf("interspersed(%q) = %q, %v; want a usage error", in, got, err)
			continue
		}
		if !strings.Contains(err.Error(), "needs a value") {
			t.Errorf("interspersed(%q): %v; want it to say the flag needs a value", in, err)
		}
	}
}
