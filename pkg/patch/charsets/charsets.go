// Package charsets converts mail text from the charsets mail declares
// (ISO-8859-x, Windows-125x, KOI8, Shift_JIS, GB18030, UTF-16 and the rest
// of the IANA MIME names) to UTF-8, for pkg/patch: a program that reads
// format-patch mail in other charsets than UTF-8 and ASCII passes Decode to
// patch.UseCharsets once.
//
// It is a package of its own because golang.org/x/text's charset tables are
// built when a program starts (about 0.13 ms, whichever command runs), and
// dome's front program, which applies patch series itself, must start as
// fast as a Go hello world: it links pkg/patch without this package and
// hands a series that needs it to the full command set.
package charsets

import (
	"golang.org/x/text/encoding/ianaindex"
)

// Decode converts s from the charset named name (an IANA MIME name, any
// case) to UTF-8; known is false for a name it does not know. It is a
// patch.Decoder.
func Decode(name, s string) (out string, known bool, err error) {
	enc, err := ianaindex.MIME.Encoding(name)
	if err != nil || enc == nil {
		return "", false, nil
	}
	out, err = enc.NewDecoder().String(s)
	return out, true, err
}
