package specfilter

import "sort"

// Explain says why the filtered spec is what it is: for every operation,
// kept or dropped and the selector that decided it; for every component
// and tag, kept or dropped; the references bundled; what the profile's
// overrides removed; and warnings. Every list is sorted.
type Explain struct {
	Profile    string              `json:"profile"`
	Spec       string              `json:"spec"`
	OpenAPI    string              `json:"openapi"`
	Operations []OperationDecision `json:"operations"`
	Webhooks   []OperationDecision `json:"webhooks,omitempty"`
	Selectors  []SelectorUse       `json:"selectors"`
	Components []ComponentDecision `json:"components"`
	Tags       []TagDecision       `json:"tags,omitempty"`
	Bundled    []Bundled           `json:"bundled,omitempty"`
	Removed    []string            `json:"removed,omitempty"`
	Stripped   int                 `json:"stripped_extensions"`
	Warnings   []string            `json:"warnings"`
	Counts     Counts              `json:"counts"`
}

// OperationDecision is one operation's fate.
type OperationDecision struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	OperationID string `json:"operation_id,omitempty"`
	Kept        bool   `json:"kept"`
	// Decision is "allow", "deny", "not allowed" (no allow selector
	// matched), "webhooks" or "not selected" (webhooks).
	Decision string `json:"decision"`
	Selector string `json:"selector,omitempty"`
}

// SelectorUse counts the operations a selector matched.
type SelectorUse struct {
	List     string `json:"list"` // allow, deny, webhooks
	Selector string `json:"selector"`
	Matches  int    `json:"matches"`
}

// ComponentDecision is one input component's fate.
type ComponentDecision struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	Kept    bool   `json:"kept"`
	Origin  string `json:"origin,omitempty"` // file#pointer, for bundled components
}

// TagDecision is one tag's fate.
type TagDecision struct {
	Name string `json:"name"`
	Kept bool   `json:"kept"`
}

// Counts sums up the report.
type Counts struct {
	Operations     int `json:"operations"`
	KeptOperations int `json:"kept_operations"`
	Components     int `json:"components"`
	KeptComponents int `json:"kept_components"`
}

func (e *Explain) warn(msg string) { e.Warnings = append(e.Warnings, msg) }

func methodRank() map[string]int {
	m := map[string]int{}
	for i, x := range httpMethods {
		m[x] = i
	}
	return m
}

// finish sorts every list and fills in the counts.
func (e *Explain) finish() {
	rank := methodRank()
	byRoute := func(ds []OperationDecision) {
		sort.SliceStable(ds, func(i, j int) bool {
			if ds[i].Path != ds[j].Path {
				return ds[i].Path < ds[j].Path
			}
			return rank[lower(ds[i].Method)] < rank[lower(ds[j].Method)]
		})
	}
	byRoute(e.Operations)
	byRoute(e.Webhooks)
	sort.SliceStable(e.Components, func(i, j int) bool {
		if e.Components[i].Section != e.Components[j].Section {
			return e.Components[i].Section < e.Components[j].Section
		}
		return e.Components[i].Name < e.Components[j].Name
	})
	sort.SliceStable(e.Tags, func(i, j int) bool { return e.Tags[i].Name < e.Tags[j].Name })
	sort.Strings(e.Removed)
	sort.Strings(e.Warnings)
	e.Warnings = dedupe(e.Warnings)
	if e.Warnings == nil {
		e.Warnings = []string{}
	}
	e.Counts = Counts{}
	for _, d := range e.Operations {
		e.Counts.Operations++
		if d.Kept {
			e.Counts.KeptOperations++
		}
	}
	for _, c := range e.Components {
		e.Counts.Components++
		if c.Kept {
			e.Counts.KeptComponents++
		}
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// sortOperations orders kept operations by path, then method.
func sortOperations(ops []Operation) {
	rank := methodRank()
	sort.SliceStable(ops, func(i, j int) bool {
		if ops[i].Webhook != ops[j].Webhook {
			return !ops[i].Webhook
		}
		if ops[i].Path != ops[j].Path {
			return ops[i].Path < ops[j].Path
		}
		return rank[lower(ops[i].Method)] < rank[lower(ops[j].Method)]
	})
}
