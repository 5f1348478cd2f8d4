package app

import "testing"

func TestTerminalHelp(t *testing.T) {
	for in, want := range map[string]string{
		"see [runs.md](runs.md).":                           "see docs/runs.md.",
		"([the gateway](runs.md#the-gateway))":              "(the gateway (docs/runs.md))",
		"[paths git refuses](patches.md#paths-git-refuses)": "paths git refuses (docs/patches.md)",
		"[x](https://example.com) and `[a](b)`":             "[x](https://example.com) and `[a](b)`",
		"no links":                                          "no links",
	} {
		if got := terminalHelp(in); got != want {
			t.Errorf("terminalHelp(%q) = %q, want %q", in, got, want)
		}
	}
}
