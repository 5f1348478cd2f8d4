package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dome-registry/dome/internal/readcmd"
)

// writeJSON writes v as indented JSON with a final newline. Struct fields keep
// their declared order and map keys are sorted, so the shape is stable.
func writeJSON(w io.Writer, v any) error { return readcmd.WriteJSON(w, v) }

// writeJSONLine writes v as one compact JSON line (JSON Lines streams).
func writeJSONLine(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON output: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// table returns a tabwriter for aligned human output; call Flush when done.
func table(w io.Writer) *tabwriter.Writer { return readcmd.Table(w) }
