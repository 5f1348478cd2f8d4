package stack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// strictUnmarshal decodes data into v refusing unknown members and trailing
// data.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

func sortStrings(s []string) { sort.Strings(s) }
