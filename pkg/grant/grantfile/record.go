package grantfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/grant"
)

// record is one line of grants.log.
type record struct {
	Op         string            `json:"op"` // "spend" or "revoke"
	Spend      *grant.Spend      `json:"spend,omitempty"`
	Revocation *grant.Revocation `json:"revocation,omitempty"`
}

// maxLine bounds one record line.
const maxLine = 8 << 10

// parseRecord reads one line (without its newline) strictly: unknown
// members, trailing data and invalid values are errors.
func parseRecord(line []byte) (record, error) {
	var r record
	if len(line) > maxLine {
		return r, fmt.Errorf("line of %d bytes, at most %d", len(line), maxLine)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, err
	}
	if dec.More() {
		return r, errors.New("data after the record")
	}
	switch {
	case r.Op == "spend" && r.Spend != nil && r.Revocation == nil:
		return r, r.Spend.Check()
	case r.Op == "revoke" && r.Revocation != nil && r.Spend == nil:
		return r, r.Revocation.Check()
	}
	return r, errors.New(`want {"op": "spend", "spend": {...}} or {"op": "revoke", "revocation": {...}}`)
}

func (r record) line() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
