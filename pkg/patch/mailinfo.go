package patch

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// The mail of one format-patch message is read as `git am` reads it (git's
// mailinfo.c and builtin/am.c), so that a commit made from it is the one
// git am makes: header lines unfolded and RFC 2047-decoded; From, Subject
// and Date taken from the header or, when the body starts with them, from
// in-body header lines; the subject stripped of "Re:", ":" and bracketed
// prefixes ("[PATCH v2 1/3]") with white space collapsed; the author's name
// and address read as mailinfo reads them (quoted names, "(comments)", a
// name that is empty, too long or holds "@<>" replaced by the address);
// the message body from the first line that is not blank (leading spaces
// kept) up to the line that starts the patch ("---", "--- name", "diff -",
// "Index: "), in the mail's charset converted to UTF-8. The commit message
// is then the subject, a blank line and that body, cleaned as git's
// stripspace cleans it (see Header.Message).

// mailHeaders are the headers mailinfo keeps, in its order.
var mailHeaders = [3]string{"From", "Subject", "Date"}

// mail is the state of reading one message (git's struct mailinfo).
type mailState struct {
	src         string
	line        int        // 1-based line of the input, for errors
	pHdr, sHdr  [3]*string // mail header and in-body header values
	charset     string
	headerStage bool
	accum       string // an in-body header being read (with continuation lines)
	log         strings.Builder
	patchBreak  bool
}

// mailHeader reads the headers and commit message of a format-patch message
// from p.i (the line after "From <sha> ..."), leaving p.i at the line that
// starts the patch.
func (p *parser) mailHeader(h *Header) error {
	m := &mailState{src: p.src, headerStage: true}
	// the "From <sha>" line counts as a header: lines that continue it
	// are its own
	for p.i < len(p.lines) && p.lines[p.i] != "" && (p.lines[p.i][0] == ' ' || p.lines[p.i][0] == '\t') {
		p.i++
	}
	for p.i < len(p.lines) {
		m.line = p.i + 1
		l := rtrimSpace(p.lines[p.i])
		if l == "" || !isRFC2822Header(l) {
			break // the blank line (or first non-header line) is the body's
		}
		p.i++
		for p.i < len(p.lines) && p.lines[p.i] != "" && (p.lines[p.i][0] == ' ' || p.lines[p.i][0] == '\t') {
			l += rtrimSpace(" " + p.lines[p.i][1:])
			p.i++
		}
		if err := m.checkHeader(l, &m.pHdr, true); err != nil {
			return err
		}
	}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if mboxFrom().MatchString(l) {
			break
		}
		m.line = p.i + 1
		if strings.HasSuffix(l, "\r\n") { // git am (mailsplit) reads CRLF mail as LF
			l = l[:len(l)-2] + "\n"
		}
		stop, err := m.commitMsg(l)
		if err != nil {
			return err
		}
		if stop {
			break
		}
		p.i++
	}
	if err := m.flushAccum(); err != nil {
		return err
	}
	return m.info(h)
}

func (m *mailState) errf(format string, a ...any) error {
	return p0errf(m.src, m.line, format, a...)
}

// isRFC2822Header: a "From " or ">From " line, or a field name (printable
// ASCII but ":") followed by ":".
func isRFC2822Header(l string) bool {
	if strings.HasPrefix(l, "From ") || strings.HasPrefix(l, ">From ") {
		return true
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c == ':' {
			return true
		}
		if c < 33 || c > 126 {
			return false
		}
	}
	return false
}

// skipHeader matches "Name:" (name in any case) and returns the value
// without the white space after the colon.
func skipHeader(l, name string) (string, bool) {
	if len(l) <= len(name) || !strings.EqualFold(l[:len(name)], name) || l[len(name)] != ':' {
		return "", false
	}
	return strings.TrimLeft(l[len(name)+1:], gitSpace), true
}

// checkHeader takes the value of a header mailinfo keeps (into hdr, unless
// already set and not overwrite) or the charset of a Content-Type.
func (m *mailState) checkHeader(l string, hdr *[3]*string, overwrite bool) error {
	for i, name := range mailHeaders {
		if hdr[i] != nil && !overwrite {
			continue
		}
		if v, ok := skipHeader(l, name); ok {
			d, err := m.decodeHeader(v)
			if err != nil {
				return err
			}
			hdr[i] = &d
			return nil
		}
	}
	if v, ok := skipHeader(l, "Content-Type"); ok {
		if _, ok := attr(v, "boundary="); ok {
			return m.errf("a multipart mail (Content-Type %q) is not read; export the patch with plain git format-patch, not as an attachment", v)
		}
		m.charset, _ = attr(v, "charset=")
	}
	if v, ok := skipHeader(l, "Content-Transfer-Encoding"); ok {
		if lv := strings.ToLower(v); strings.Contains(lv, "base64") || strings.Contains(lv, "quoted-printable") {
			return m.errf("Content-Transfer-Encoding %q is not read; export the patch with git format-patch (8bit)", v)
		}
	}
	return nil
}

// attr finds name (e.g. "charset=") in a header value, case-insensitively,
// and returns its value, quoted or up to ";", space or tab.
func attr(v, name string) (string, bool) {
	i := strings.Index(strings.ToLower(v), name)
	if i < 0 {
		return "", false
	}
	rest := v[i+len(name):]
	ends := "; \t"
	if strings.HasPrefix(rest, `"`) {
		rest, ends = rest[1:], `"`
	}
	if j := strings.IndexAny(rest, ends); j >= 0 {
		rest = rest[:j]
	}
	return rest, true
}

// decodeHeader decodes RFC 2047 encoded words (=?charset?B|Q?...?=) as
// git's decode_header: white space between two encoded words is dropped,
// text is converted from the word's charset to UTF-8.
func (m *mailState) decodeHeader(s string) (string, error) {
	var out strings.Builder
	in := s
	first := true
	for {
		ep := strings.Index(in, "=?")
		if ep < 0 {
			break
		}
		if ep > 0 && (first || strings.TrimLeft(in[:ep], gitSpace) != "") {
			out.WriteString(in[:ep])
		}
		first = false
		rest := in[ep+2:]
		q := strings.IndexByte(rest, '?')
		if q < 0 || q+2 >= len(rest) || rest[q+2] != '?' {
			return "", m.errf("malformed RFC 2047 encoded word in %q", s)
		}
		charset, enc := rest[:q], rest[q+1]
		end := strings.Index(rest[q+3:], "?=")
		if end < 0 {
			return "", m.errf("unterminated RFC 2047 encoded word in %q", s)
		}
		piece := rest[q+3 : q+3+end]
		var dec string
		switch enc {
		case 'b', 'B':
			dec = decodeB(piece)
		case 'q', 'Q':
			dec = decodeQ(piece, true)
		default:
			return "", m.errf("unknown RFC 2047 encoding %q in %q", enc, s)
		}
		dec, err := m.toUTF8(dec, charset)
		if err != nil {
			return "", err
		}
		out.WriteString(dec)
		in = rest[q+3+end+2:]
	}
	out.WriteString(in)
	return out.String(), nil
}

// decodeQ decodes quoted-printable ("=XX"; with rfc2047, "_" is a space)
// as git's decode_q_segment: "=" at the end stops, "=" before anything but
// two hex digits is kept.
func decodeQ(s string, rfc2047 bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '=' {
			if i+1 >= len(s) || s[i+1] == '\n' {
				break
			}
			if i+2 < len(s) {
				if v, err := hex.DecodeString(s[i+1 : i+3]); err == nil {
					b.WriteByte(v[0])
					i += 2
					continue
				}
			}
		}
		if rfc2047 && c == '_' {
			c = ' '
		}
		b.WriteByte(c)
	}
	return b.String()
}

// decodeB decodes base64 as git's decode_b_segment: characters outside the
// alphabet (padding included) are skipped.
func decodeB(s string) string {
	var b strings.Builder
	pos, acc := 0, 0
	for i := 0; i < len(s); i++ {
		c := int(s[i])
		switch {
		case c == '+':
			c = 62
		case c == '/':
			c = 63
		case c >= 'A' && c <= 'Z':
			c -= 'A'
		case c >= 'a' && c <= 'z':
			c -= 'a' - 26
		case c >= '0' && c <= '9':
			c -= '0' - 52
		default:
			continue
		}
		switch pos {
		case 0:
			acc = c << 2
		case 1:
			b.WriteByte(byte(acc | c>>4))
			acc = (c & 15) << 4
		case 2:
			b.WriteByte(byte(acc | c>>2))
			acc = (c & 3) << 6
		case 3:
			b.WriteByte(byte(acc | c))
			acc, pos = 0, -1
		}
		pos++
	}
	return b.String()
}

// A Decoder converts s from the charset named charset to UTF-8; known is
// false for a charset it does not know.
type Decoder func(charset, s string) (out string, known bool, err error)

var charsetDecoder atomic.Pointer[Decoder]

// UseCharsets makes the mail reader convert text in every charset dec
// knows (pkg/patch/charsets.Decode knows the IANA MIME names). Without it
// only UTF-8 and ASCII mail is read, and mail in another charset is an
// error that wraps ErrNoCharsets.
func UseCharsets(dec Decoder) { charsetDecoder.Store(&dec) }

// ErrNoCharsets is wrapped by the error for mail in a charset other than
// UTF-8 and ASCII when no Decoder was given (UseCharsets).
var ErrNoCharsets = errors.New("no charset conversion in this program")

// toUTF8 converts s from charset as git am does (its metainfo charset is
// UTF-8); UTF-8, ASCII and an empty charset need nothing.
func (m *mailState) toUTF8(s, charset string) (string, error) {
	switch strings.ToLower(charset) {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return s, nil
	}
	dec := charsetDecoder.Load()
	if dec == nil {
		err := (&parser{src: m.src}).inputError(m.line, "cannot convert from charset %q to UTF-8: %v", charset, ErrNoCharsets)
		err.Err = ErrNoCharsets
		return "", err
	}
	out, known, err := (*dec)(charset, s)
	if !known {
		return "", m.errf("cannot convert from charset %q to UTF-8", charset)
	}
	if err != nil {
		return "", m.errf("cannot convert from charset %q to UTF-8: %v", charset, err)
	}
	return out, nil
}

// commitMsg takes one body line (git's handle_commit_msg); true when the
// line starts the patch.
func (m *mailState) commitMsg(l string) (bool, error) {
	if m.headerStage && (l == "" || l == "\n") {
		if m.accum != "" {
			if err := m.flushAccum(); err != nil {
				return false, err
			}
			m.headerStage = false
		}
		return false, nil // blank lines before the message
	}
	if m.headerStage {
		in, err := m.inbodyHeader(l)
		if err != nil {
			return false, err
		}
		if m.headerStage = in; in {
			return false, nil
		}
	}
	l, err := m.toUTF8(l, m.charset)
	if err != nil {
		return false, err
	}
	if patchBreak(l) {
		m.patchBreak = true
		return true, nil
	}
	m.log.WriteString(l)
	return false, nil
}

// inbodyHeader reports whether l belongs to in-body header lines at the top
// of the message (git's check_inbody_header).
func (m *mailState) inbodyHeader(l string) (bool, error) {
	if m.accum != "" && (l[0] == ' ' || l[0] == '\t') {
		m.accum = strings.TrimSuffix(m.accum, "\n") + l
		return true, nil
	}
	if err := m.flushAccum(); err != nil {
		return false, err
	}
	if strings.HasPrefix(l, ">From") && len(l) > 5 && isSpace(l[5]) {
		return isFormatPatchSeparator(l[1:]), nil
	}
	if strings.HasPrefix(l, "[PATCH]") && len(l) > 7 && isSpace(l[7]) {
		v := l
		m.sHdr[1] = &v
		return true, nil
	}
	for i, name := range mailHeaders {
		if _, ok := skipHeader(l, name); ok && m.sHdr[i] == nil {
			m.accum += l
			return true, nil
		}
	}
	return false, nil
}

func (m *mailState) flushAccum() error {
	if m.accum == "" {
		return nil
	}
	a := m.accum
	m.accum = ""
	return m.checkHeader(a, &m.sHdr, false)
}

// isFormatPatchSeparator: "From <40 hex> Mon Sep 17 00:00:00 2001\n".
func isFormatPatchSeparator(l string) bool {
	const sample = "From e6807f3efca28b30decfecb1732a56c7db1137ee Mon Sep 17 00:00:00 2001\n"
	if len(l) != len(sample) || !strings.HasPrefix(l, "From ") {
		return false
	}
	for i := 5; i < 45; i++ {
		if c := l[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return l[45:] == sample[45:]
}

// patchBreak is git's patchbreak: the line that ends the message.
func patchBreak(l string) bool {
	if strings.HasPrefix(l, "diff -") || strings.HasPrefix(l, "Index: ") {
		return true
	}
	if len(l) < 4 || !strings.HasPrefix(l, "---") {
		return false
	}
	if l[3] == ' ' && !isSpace(l[4]) {
		return true // "--- name"
	}
	for i := 3; i < len(l); i++ {
		if l[i] == '\n' {
			return true // "---" and white space
		}
		if !isSpace(l[i]) {
			return false
		}
	}
	return false
}

// gitSpace is white space as git's own ctype (sane_ctype) has it: no
// vertical tab, no form feed.
const gitSpace = " \t\n\r"

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func rtrimSpace(s string) string { return strings.TrimRight(s, gitSpace) }

// info settles the header fields (git's handle_info): in-body values win
// when the message has a patch.
func (m *mailState) info(h *Header) error {
	for i, name := range mailHeaders {
		v := m.pHdr[i]
		if m.patchBreak && m.sHdr[i] != nil {
			v = m.sHdr[i]
		}
		if v == nil {
			continue
		}
		if strings.IndexByte(*v, 0) >= 0 {
			return m.errf("a NUL byte in %q is not allowed", name)
		}
		switch name {
		case "Subject":
			h.Subject = cleanupSpace(cleanupSubject(*v))
		case "From":
			h.Author, h.Email = parseFrom(cleanupSpace(*v))
		case "Date":
			h.Date = cleanupSpace(*v)
		}
	}
	h.Body = m.log.String()
	return nil
}

// cleanupSpace turns every run of white space into one space.
func cleanupSpace(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			b.WriteByte(' ')
			for i+1 < len(s) && isSpace(s[i+1]) {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cleanupSubject removes leading "Re:", ":", white space and "[...]"
// groups, then trims (git's cleanup_subject, without --keep).
func cleanupSubject(s string) string {
	at := 0
loop:
	for at < len(s) {
		switch s[at] {
		case 'r', 'R':
			if len(s) <= at+3 {
				break loop
			}
			if (s[at+1] == 'e' || s[at+1] == 'E') && s[at+2] == ':' {
				s = s[:at] + s[at+3:]
				continue
			}
			break loop
		case ' ', '\t', ':':
			s = s[:at] + s[at+1:]
			continue
		case '[':
			j := strings.IndexByte(s[at:], ']')
			if j < 0 {
				break loop
			}
			s = s[:at] + s[at+j+1:]
			continue
		}
		break
	}
	return strings.Trim(s, gitSpace)
}

// parseFrom reads a From value as git's handle_from: the address is the
// word around "@" (in <> or not), the rest (unquoted, without a pair of
// parentheses around it) the name; a name that is empty, longer than 60
// bytes or holds "@", "<" or ">" is replaced by the address.
func parseFrom(from string) (name, email string) {
	f := unquoteQuotedPair(from)
	at := strings.IndexByte(f, '@')
	if at < 0 {
		return bogusFrom(from)
	}
	b := []byte(f)
	for at > 0 {
		c := b[at-1]
		if isSpace(c) {
			break
		}
		if c == '<' {
			b[at-1] = ' '
			break
		}
		at--
	}
	el := strings.IndexAny(string(b[at:]), " \n\t\r\v\f>")
	if el < 0 {
		el = len(b) - at
	}
	email = string(b[at : at+el])
	cut := el
	if at+el < len(b) {
		cut++
	}
	rest := string(b[:at]) + string(b[at+cut:])
	rest = strings.Trim(cleanupSpace(rest), gitSpace)
	if len(rest) > 0 && rest[0] == '(' && rest[len(rest)-1] == ')' {
		rest = rest[1 : len(rest)-1]
	}
	return saneName(rest, email), email
}

// bogusFrom reads "John Doe <johndoe>" (no "@").
func bogusFrom(line string) (string, string) {
	bra := strings.IndexByte(line, '<')
	if bra < 0 {
		return "", ""
	}
	ket := strings.IndexByte(line[bra:], '>')
	if ket < 0 {
		return "", ""
	}
	email := line[bra+1 : bra+ket]
	return saneName(strings.Trim(line[:bra], gitSpace), email), email
}

func saneName(name, email string) string {
	if name == "" || len(name) > 60 || strings.ContainsAny(name, "@<>") {
		return email
	}
	return name
}

// unquoteQuotedPair removes the quotes of "quoted strings" and the
// backslashes of quoted pairs; (comments) keep their parentheses.
func unquoteQuotedPair(s string) string {
	var b strings.Builder
	i := 0
	var comment func()
	comment = func() { // after "("
		b.WriteByte('(')
		literal := false
		for i < len(s) {
			c := s[i]
			i++
			if literal {
				literal = false
			} else {
				switch c {
				case '\\':
					literal = true
					continue
				case '(':
					comment()
					continue
				case ')':
					b.WriteByte(')')
					return
				}
			}
			b.WriteByte(c)
		}
	}
	for i < len(s) {
		c := s[i]
		i++
		switch c {
		case '"':
			literal := false
			for i < len(s) {
				c := s[i]
				i++
				if literal {
					literal = false
				} else if c == '\\' {
					literal = true
					continue
				} else if c == '"' {
					break
				}
				b.WriteByte(c)
			}
		case '(':
			comment()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Message returns the commit message git am writes: the subject, a blank
// line and the body, cleaned as git's stripspace cleans it (white space at
// line ends removed, blank lines at the start and end dropped, runs of
// blank lines made one, a final newline); "" when there is none.
func (h Header) Message() string {
	return stripSpace(h.Subject + "\n\n" + h.Body)
}

// stripSpace is git's strbuf_stripspace without comment removal.
func stripSpace(s string) string {
	var b strings.Builder
	empties := 0
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		line = rtrimSpace(line)
		if line == "" {
			empties++
			continue
		}
		if empties > 0 && b.Len() > 0 {
			b.WriteByte('\n')
		}
		empties = 0
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// p0errf is errf for code that has no parser at hand.
func p0errf(src string, line int, format string, a ...any) error {
	return (&parser{src: src}).errf(line, "%s", fmt.Sprintf(format, a...))
}
