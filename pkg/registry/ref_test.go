package registry

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The grammar ValidID implements by hand.
var idGrammar = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"petstore": true, "a": true, "0": true, "tool-0001": true, "a.b_c-d": true, "v1.2": true,
		"": false, "-a": false, ".a": false, "_a": false, "A": false, "petStore": false, "a b": false,
		"a/b": false, "a@b": false, "a..b": false, "é": false, strings.Repeat("a", 100): true,
		strings.Repeat("a", 101): false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestValidIDMatchesGrammar compares the loop with the regexp on random
// strings over an alphabet that hits every branch.
func TestValidIDMatchesGrammar(t *testing.T) {
	const alphabet = "az09._-A/@ \x00\xff"
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50000; i++ {
		b := make([]byte, rng.IntN(8))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		id := string(b)
		want := len(id) <= 100 && idGrammar.MatchString(id) && !strings.Contains(id, "..")
		if got := ValidID(id); got != want {
			t.Fatalf("ValidID(%q) = %v, grammar says %v", id, got, want)
		}
	}
}
