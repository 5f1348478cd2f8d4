// Package canonical owns dome's one canonical form of JSON: the JSON
// Canonicalization Scheme of RFC 8785 (https://www.rfc-editor.org/rfc/rfc8785),
// identified in artifacts as "jcs-rfc8785", and the "sha256:<hex>" digests
// taken over it. It reads JSON text with its own streaming tokenizer (no
// encoding/json round trip, an explicit stack instead of recursion) and writes
// the canonical bytes: object members sorted by the UTF-16 code units of their
// names, numbers laid out as ECMAScript's Number.prototype.toString does,
// strings with the RFC's minimal escapes, no whitespace. It refuses, with the
// byte offset of the fault, everything on which two parsers could disagree:
// duplicate member names (also when spelled with escapes), invalid UTF-8, lone
// surrogates in \u escapes, numbers that overflow a double, NaN and Infinity,
// trailing data, a byte order mark and nesting deeper than a limit (default
// 1000). It does not pretty-print, does not accept JSON5 or comments, and never
// normalizes Unicode (RFC 8785 section 3.2.2.2 keeps strings as they are).
package canonical
