package trace

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/dome-registry/dome/pkg/schemaval"
)

// checkSources holds the catalogue against the documents it was written
// from, when the caller has them: every quote must be in its document;
// every id a document gives itself (its own_ids) must be a catalogue
// id; every line its cover expression matches must hold the quote of
// one of its entries. A quote that is not there or a document that cannot
// be read makes the catalogue bad input (diagnostics); an id or a line that
// no entry holds is a gap.
func checkSources(cat *Catalog, sources fs.FS) ([]Gap, []schemaval.Diagnostic) {
	var gaps []Gap
	var diags []schemaval.Diagnostic
	docs := map[string]*sourceDoc{}
	for i, s := range cat.Seeds {
		data, err := readBounded(sources, s.File)
		if err != nil {
			diags = append(diags, cat.diag(pointer("seeds", i, "file"), fmt.Sprintf("cannot read %s from the source documents: %v", s.File, err), "pass the folder that holds the source documents"))
			continue
		}
		docs[s.ID] = newSourceDoc(string(data))
	}
	ids := map[string]bool{}
	for i, r := range cat.Requirements {
		ids[r.ID] = true
		d, ok := docs[r.Seed]
		if !ok {
			continue
		}
		for k, quote := range r.Quotes {
			if !d.hold(normalize(quote)) {
				s, _ := cat.Seed(r.Seed)
				diags = append(diags, cat.diag(pointer("requirements", i, "quotes", k), fmt.Sprintf("%s: quote not found in %s", r.ID, s.File), "quote the document word for word (emphasis, backquotes and runs of spaces do not count)"))
			}
		}
	}
	if len(diags) > 0 {
		return nil, diags
	}
	for _, s := range cat.Seeds {
		d := docs[s.ID]
		if s.OwnIDs != "" {
			re := regexp.MustCompile(s.OwnIDs) // checked by validate
			seen := map[string]bool{}
			for n, l := range d.lines {
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
			for n, l := range d.lines {
				if re.MatchString(l) && !d.held(n) {
					gaps = append(gaps, Gap{Problem: GapUncovered, File: s.File, Line: n + 1,
						Detail: fmt.Sprintf("%q is held by no entry: add one whose quotes take words from this line", truncate(strings.TrimSpace(l), 120))})
				}
			}
		}
	}
	return gaps, nil
}

// sourceDoc is a document normalized for quoting: text is the normalized
// whole, span[n] the part of it line n became, marks what quotes hold.
type sourceDoc struct {
	lines []string
	text  string
	span  [][2]int
	marks []bool // per byte of text
}

func newSourceDoc(raw string) *sourceDoc {
	d := &sourceDoc{lines: strings.Split(raw, "\n")}
	var b strings.Builder
	for _, l := range d.lines {
		nl := normalize(l)
		if nl == "" {
			d.span = append(d.span, [2]int{b.Len(), b.Len()})
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		start := b.Len()
		b.WriteString(nl)
		d.span = append(d.span, [2]int{start, b.Len()})
	}
	d.text = b.String()
	d.marks = make([]bool, len(d.text))
	return d
}

// hold marks every occurrence of the normalized quote q and reports
// whether there was one.
func (d *sourceDoc) hold(q string) bool {
	if q == "" {
		return false
	}
	found := false
	for off := 0; off <= len(d.text); {
		i := strings.Index(d.text[off:], q)
		if i < 0 {
			break
		}
		found = true
		at := off + i
		for k := at; k < at+len(q); k++ {
			d.marks[k] = true
		}
		off = at + 1
	}
	return found
}

// held reports whether a quote covers part of line n.
func (d *sourceDoc) held(n int) bool {
	sp := d.span[n]
	for k := sp[0]; k < sp[1]; k++ {
		if d.marks[k] {
			return true
		}
	}
	return false
}

// normalize drops what Markdown adds around words (emphasis, backquotes,
// escapes) and collapses white space, so a quote matches however the
// document is wrapped.
func normalize(s string) string {
	s = strings.NewReplacer("*", "", "`", "", "\\", "", "\u00a0", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}
