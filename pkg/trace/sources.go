package trace

import (
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/pkg/schemaval"
)

// checkSources holds the catalogue against the documents it was written
// from, when the caller has them: every quote must be in its document;
// every id a document gives itself (a seed's own_ids) must be a catalogue
// id; every line a seed's cover expression matches must hold the quote of
// one of its entries. A quote that is not there or a document that cannot
// be read makes the catalogue bad input (diagnostics); an id or a line that
// no entry holds is a gap.
func checkSources(cat *Catalog, sources fs.FS) ([]Gap, []schemaval.Diagnostic) {
	var gaps []Gap
	var diags []schemaval.Diagnostic
	texts := map[string]string{}
	lines := map[string][]string{}
	for i, s := range cat.Seeds {
		data, err := readBounded(sources, s.File)
		if err != nil {
			diags = append(diags, cat.diag("/seeds/"+strconv.Itoa(i)+"/file", fmt.Sprintf("cannot read %s from the source documents: %v", s.File, err), "pass the folder that holds the source documents"))
			continue
		}
		texts[s.ID] = normalize(string(data))
		lines[s.ID] = strings.Split(string(data), "\n")
	}
	quotes := map[string][]string{}
	ids := map[string]bool{}
	for i, r := range cat.Requirements {
		ids[r.ID] = true
		if r.Quote == "" {
			continue
		}
		text, ok := texts[r.Seed]
		if !ok {
			continue
		}
		q := normalize(r.Quote)
		if !strings.Contains(text, q) {
			s, _ := cat.Seed(r.Seed)
			diags = append(diags, cat.diag("/requirements/"+strconv.Itoa(i)+"/quote", fmt.Sprintf("%s: quote not found in %s", r.ID, s.File), "quote the document word for word (emphasis, backquotes and runs of spaces do not count)"))
			continue
		}
		quotes[r.Seed] = append(quotes[r.Seed], q)
	}
	if len(diags) > 0 {
		return nil, diags
	}
	for _, s := range cat.Seeds {
		if s.OwnIDs != "" {
			re := regexp.MustCompile(s.OwnIDs) // checked by validate
			seen := map[string]bool{}
			for n, l := range lines[s.ID] {
				for _, id := range re.FindAllString(l, -1) {
					if !ids[id] && !seen[id] {
						seen[id] = true
						gaps = append(gaps, Gap{ID: id, Problem: GapUncovered, File: s.File, Line: n + 1, Detail: "the document names this requirement; the catalogue has no entry for it"})
					}
				}
			}
		}
		if s.Cover != "" {
			re := regexp.MustCompile(s.Cover)
			for n, l := range lines[s.ID] {
				if !re.MatchString(l) {
					continue
				}
				nl := normalize(strings.TrimLeft(strings.TrimSpace(l), "-#>0123456789.) "))
				held := false
				for _, q := range quotes[s.ID] {
					if strings.Contains(nl, q) || strings.Contains(q, nl) {
						held = true
						break
					}
				}
				if !held {
					gaps = append(gaps, Gap{Problem: GapUncovered, File: s.File, Line: n + 1,
						Detail: fmt.Sprintf("%q is held by no entry: add one whose quote is taken from this line", truncate(strings.TrimSpace(l), 120))})
				}
			}
		}
	}
	return gaps, nil
}

// normalize drops what Markdown adds around words (emphasis, backquotes,
// escapes) and collapses white space, so a quote matches however the
// document is wrapped.
func normalize(s string) string {
	s = strings.NewReplacer("*", "", "`", "", "\\", "", "\u00a0", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}
