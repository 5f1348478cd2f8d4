package trace

import (
	"bytes"
	"fmt"
	"strings"
)

// Matrix is the requirement -> checks -> last result table, with a status
// summary per source document.
type Matrix struct {
	Catalog string        `json:"catalog"`
	Results string        `json:"results,omitempty"`
	Commit  string        `json:"commit,omitempty"`
	Seeds   []SeedSummary `json:"seeds"`
	Rows    []Row         `json:"requirements"`
}

// SeedSummary counts one source document's requirements by status.
type SeedSummary struct {
	Seed        string `json:"seed"`
	Title       string `json:"title"`
	Total       int    `json:"total"`
	Required    int    `json:"required"`
	Implemented int    `json:"implemented"`
	Partial     int    `json:"partial"`
	Planned     int    `json:"planned"`
	Covered     int    `json:"covered"` // with results: all checks passed
}

// Row is one requirement of the matrix. Result sums up its checks: pass
// when every check passed, fail when one failed, else the first other
// outcome; "" without results, "none" without checks.
type Row struct {
	ID        string        `json:"id"`
	Seed      string        `json:"seed"`
	Section   string        `json:"section"`
	Statement string        `json:"statement"`
	Level     string        `json:"level"`
	Status    string        `json:"status"`
	Checks    []CheckResult `json:"checks"`
	Result    string        `json:"result,omitempty"`
}

// BuildMatrix builds the matrix of cat; res may be nil. Every check must
// exist (run Verify first for the reason when one does not).
func BuildMatrix(cat *Catalog, idx *Index, res *Results) *Matrix {
	m := &Matrix{Catalog: cat.source, Seeds: []SeedSummary{}, Rows: []Row{}}
	if res != nil {
		m.Results, m.Commit = res.Source, res.Header.Commit
	}
	sums := map[string]*SeedSummary{}
	for _, s := range cat.Seeds {
		m.Seeds = append(m.Seeds, SeedSummary{Seed: s.ID, Title: s.Title})
	}
	for i := range m.Seeds {
		sums[m.Seeds[i].Seed] = &m.Seeds[i]
	}
	rows := evaluate(cat, idx, res)
	for i, r := range cat.Requirements {
		row := Row{ID: r.ID, Seed: r.Seed, Section: r.Section, Statement: r.Statement, Level: r.Level, Status: r.Status, Checks: rows[i]}
		if res != nil {
			row.Result = summarize(rows[i])
		}
		m.Rows = append(m.Rows, row)
		s := sums[r.Seed]
		s.Total++
		if r.Level == LevelRequired {
			s.Required++
		}
		switch r.Status {
		case StatusImplemented:
			s.Implemented++
		case StatusPartial:
			s.Partial++
		case StatusPlanned:
			s.Planned++
		}
		if row.Result == OutcomePass {
			s.Covered++
		}
	}
	return m
}

func summarize(checks []CheckResult) string {
	if len(checks) == 0 {
		return "none"
	}
	other := ""
	for _, c := range checks {
		switch c.Outcome {
		case OutcomeFail:
			return OutcomeFail
		case OutcomePass, OutcomeCompiled:
		default:
			if other == "" {
				other = c.Outcome
			}
		}
	}
	if other != "" {
		return other
	}
	return OutcomePass
}

// Markdown renders the matrix: the summary per source document, then one
// row per requirement.
func (m *Matrix) Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("# Requirement traceability\n\n")
	fmt.Fprintf(&b, "Catalogue: `%s`", m.Catalog)
	if m.Results != "" {
		fmt.Fprintf(&b, "; results: `%s` at commit `%s`", m.Results, m.Commit)
	} else {
		b.WriteString("; no results given (pass `--results FILE` for the last result of each check)")
	}
	b.WriteString(".\n\n## Summary\n\n")
	b.WriteString("| document | requirements | required | implemented | partial | planned | covered |\n|---|---:|---:|---:|---:|---:|---:|\n")
	var t SeedSummary
	for _, s := range m.Seeds {
		covered := "-"
		if m.Results != "" {
			covered = fmt.Sprint(s.Covered)
		}
		fmt.Fprintf(&b, "| %s (`%s`) | %d | %d | %d | %d | %d | %s |\n", cell(s.Title), s.Seed, s.Total, s.Required, s.Implemented, s.Partial, s.Planned, covered)
		t.Total += s.Total
		t.Required += s.Required
		t.Implemented += s.Implemented
		t.Partial += s.Partial
		t.Planned += s.Planned
		t.Covered += s.Covered
	}
	covered := "-"
	if m.Results != "" {
		covered = fmt.Sprint(t.Covered)
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %d | %s |\n", t.Total, t.Required, t.Implemented, t.Partial, t.Planned, covered)
	b.WriteString("\n## Requirements\n\n")
	b.WriteString("| id | section | requirement | level | status | checks | last result |\n|---|---|---|---|---|---|---|\n")
	for _, r := range m.Rows {
		var checks []string
		for _, c := range r.Checks {
			s := fmt.Sprintf("%s: `%s`", c.Kind, c.Check)
			if c.Outcome != "" {
				s += " (" + c.Outcome + ")"
			}
			checks = append(checks, s)
		}
		result := r.Result
		if result == "" {
			result = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.ID, cell(r.Section), cell(r.Statement), r.Level, r.Status, cell(strings.Join(checks, "<br>")), result)
	}
	return b.Bytes()
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s)
}
