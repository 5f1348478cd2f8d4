package aicontract

import "unicode/utf8"

// LogEntry is the spec's section 7 log record of one request. It never
// holds the user input: only its digest and length.
type LogEntry struct {
	Event              string         `json:"event"`
	GeneratedAt        string         `json:"generatedAt"`
	ProjectID          string         `json:"projectId"`
	CommandID          string         `json:"commandId"`
	IntentID           string         `json:"intentId,omitempty"`
	RulesApplied       []string       `json:"rulesApplied"`
	ConstraintsApplied map[string]any `json:"constraintsApplied"`
	Status             string         `json:"status"`
	BlockedReason      string         `json:"blockedReason,omitempty"`
	ContractID         string         `json:"contractId,omitempty"`
	UserInputDigest    string         `json:"userInputDigest"`
	UserInputChars     int            `json:"userInputChars"`
}

// Log returns the log record of a resolution of req.
func (r *Result) Log(req Request) LogEntry {
	e := LogEntry{
		Event: "contract.resolve", GeneratedAt: r.trace.generatedAt,
		ProjectID: req.ProjectID, CommandID: req.CommandID, IntentID: r.trace.intent,
		RulesApplied: r.trace.rules, ConstraintsApplied: r.trace.constraints, Status: r.Status,
		UserInputDigest: InputDigest(req.UserInput), UserInputChars: utf8.RuneCountInString(req.UserInput),
	}
	if e.RulesApplied == nil {
		e.RulesApplied = []string{}
	}
	if e.ConstraintsApplied == nil {
		e.ConstraintsApplied = map[string]any{}
	}
	if r.Blocked != nil {
		e.BlockedReason = r.Blocked.Reason
	}
	if r.Contract != nil {
		e.ContractID = r.Contract.ID
	}
	return e
}
