package agent

import (
	"strings"
	"unicode"
)

// normalize lowercases s, turns every run of characters that are not
// letters or digits into one space and trims the ends: "Write  unit-tests!"
// and "write unit tests" normalize alike.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		space = true
	}
	return b.String()
}

// words splits a normalized string.
func words(norm string) []string {
	if norm == "" {
		return nil
	}
	return strings.Split(norm, " ")
}

// containsRun reports whether needle occurs in hay as a run of whole words.
func containsRun(hay, needle []string) bool {
	if len(needle) == 0 || len(needle) > len(hay) {
		return false
	}
outer:
	for i := 0; i+len(needle) <= len(hay); i++ {
		for j := range needle {
			if hay[i+j] != needle[j] {
				continue outer
			}
		}
		return true
	}
	return false
}

// stopwords carry no signal for matching a task to an agent or ability.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true, "can": true,
	"do": true, "for": true, "from": true, "has": true, "have": true, "how": true, "i": true, "in": true,
	"into": true, "is": true, "it": true, "its": true, "me": true, "my": true, "of": true, "on": true, "or": true,
	"our": true, "please": true, "so": true, "that": true, "the": true, "their": true, "them": true, "then": true,
	"there": true, "these": true, "this": true, "those": true, "to": true, "up": true, "us": true, "was": true,
	"we": true, "what": true, "when": true, "where": true, "which": true, "who": true, "why": true, "will": true,
	"with": true, "you": true, "your": true,
}

// terms returns the distinct words of s that are not stopwords, in order
// of first appearance.
func terms(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range words(normalize(s)) {
		if stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// termSet adds the terms of every string to a set.
func termSet(set map[string]bool, ss ...string) map[string]bool {
	if set == nil {
		set = map[string]bool{}
	}
	for _, s := range ss {
		for _, t := range terms(s) {
			set[t] = true
		}
	}
	return set
}
