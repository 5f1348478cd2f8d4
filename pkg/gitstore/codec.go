package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The encoding and decoding of commit and tag objects (gitformat-commit,
// gitformat-tag: https://git-scm.com/docs/gitformat-signature). Dome wrote
// and read these objects through go-git; this file produces the very bytes
// go-git's object.Commit.Encode and object.Tag.Encode produce, and decodes
// with go-git's verdicts (codec_test.go and the fuzz targets compare the
// two), so that object ids and signatures of existing registries stay what
// they are.

// ErrMalformedObject is a commit or tag object that does not decode.
var ErrMalformedObject = errors.New("malformed object")

// commitObject is everything dome reads from a commit object.
type commitObject struct {
	tree              Hash
	parents           []Hash
	author, committer Signature
	encoding          string // the first encoding header; UTF-8, git's default, without one
	mergeTag          string // the first mergetag header, its continuation lines joined
	pgpSignature      string // every gpgsig header, joined (git does the same)
	message           string
}

// tagObject is everything dome reads from a tag object.
type tagObject struct {
	target       Hash
	targetType   ObjectType
	name         string
	tagger       Signature
	message      string
	pgpSignature string // the signature block split off the end of the message
}

// lineReader hands out the lines of an object, their "\n" included, with
// one line of push-back, like the bufio-based scanners of go-git whose
// verdicts it reproduces. last reports a line without a final "\n" (the
// end of the data); an empty line with last set is the end.
type lineReader struct {
	data        []byte
	pos         int
	pending     []byte
	pendingLast bool
	hasPending  bool
}

func (l *lineReader) next() (line []byte, last bool) {
	if l.hasPending {
		l.hasPending = false
		return l.pending, l.pendingLast
	}
	rest := l.data[l.pos:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		l.pos += i + 1
		return rest[:i+1], false
	}
	l.pos = len(l.data)
	return rest, true
}

func (l *lineReader) pushBack(line []byte, last bool) {
	l.pending, l.pendingLast, l.hasPending = line, last, true
}

// rest returns what has not been read (after a blank line: the message).
func (l *lineReader) rest() []byte { return l.data[l.pos:] }

func isBlankLine(line []byte) bool { return len(line) == 1 && line[0] == '\n' }

// splitHeader splits "key value\n" into its key and value (nil without a space).
func splitHeader(line []byte) (string, []byte) {
	trimmed := bytes.TrimRight(line, "\n")
	key, value, ok := bytes.Cut(trimmed, []byte{' '})
	if !ok {
		return string(trimmed), nil
	}
	return string(key), value
}

func malformed(kind, problem string) error {
	return fmt.Errorf("%w: %s: %s", ErrMalformedObject, kind, problem)
}

func parseHeaderID(kind, header string, value []byte) (Hash, error) {
	h, ok := ParseHash(string(value))
	if !ok {
		return ZeroHash, malformed(kind, "bad "+header+" hash")
	}
	return h, nil
}

// requiredHeader reads the header that must come next in an object of
// kind, name and its value; rule says where it belongs ("must be first").
func (l *lineReader) requiredHeader(kind, name, rule string) ([]byte, bool, error) {
	line, last := l.next()
	if len(line) == 0 || isBlankLine(line) {
		return nil, last, malformed(kind, "missing "+name+" header")
	}
	key, value := splitHeader(line)
	if key != name {
		return nil, last, malformed(kind, name+" header "+rule)
	}
	return value, last, nil
}

// openingID reads the header that must open an object of kind: name and
// an object id (a commit's tree, a tag's object).
func (l *lineReader) openingID(kind, name string) (Hash, bool, error) {
	value, last, err := l.requiredHeader(kind, name, "must be first")
	if err != nil {
		return ZeroHash, last, err
	}
	h, err := parseHeaderID(kind, name, value)
	return h, last, err
}

// header reads the next header line of a commit; done when the headers
// end: with the object, or at the blank line before the message, which it
// puts in msg.
func (l *lineReader) header(msg *string) (line []byte, last, done bool) {
	line, last = l.next()
	if len(line) == 0 {
		return nil, last, true
	}
	if isBlankLine(line) {
		*msg = string(l.rest())
		return nil, last, true
	}
	return line, last, false
}

// decodeCommit decodes a commit object's content. Like git (and go-git) it
// takes tree first, the parents that follow it, then author and committer
// only in their places; a header out of its place is ignored, the first
// encoding and mergetag count, and every gpgsig header adds to the
// signature. Continuation lines (a leading space) extend the mergetag and
// gpgsig values. The message is everything after the first blank line.
func decodeCommit(data []byte) (*commitObject, error) {
	const kind = "commit"
	c := &commitObject{encoding: "UTF-8"}
	l := &lineReader{data: data}
	h, last, err := l.openingID(kind, "tree")
	if err != nil {
		return nil, err
	}
	c.tree = h
	if last {
		return c, nil
	}
	// The parents that follow the tree line.
	var line []byte
	var key string
	var value []byte
	var done bool
	for {
		if line, last, done = l.header(&c.message); done {
			return c, nil
		}
		key, value = splitHeader(line)
		if key != "parent" {
			l.pushBack(line, last)
			break
		}
		p, err := parseHeaderID(kind, "parent", value)
		if err != nil {
			return nil, err
		}
		c.parents = append(c.parents, p)
		if last {
			return c, nil
		}
	}
	// The author right after them, then the committer right after it.
	for _, want := range []string{"author", "committer"} {
		if line, last, done = l.header(&c.message); done {
			return c, nil
		}
		key, value = splitHeader(line)
		if key != want {
			l.pushBack(line, last)
			continue
		}
		if want == "author" {
			c.author = decodeSignature(value)
		} else {
			c.committer = decodeSignature(value)
		}
		if last {
			return c, nil
		}
	}
	// The other headers. A line that starts with a space continues the
	// header before it; only mergetag and gpgsig keep theirs.
	var cont *string
	sawEncoding, sawMergeTag := false, false
	for {
		if line, last, done = l.header(&c.message); done {
			return c, nil
		}
		if line[0] == ' ' {
			if cont != nil {
				*cont += string(line[1:])
			}
			if last {
				return c, nil
			}
			continue
		}
		cont = nil
		key, value = splitHeader(line)
		switch key {
		case "encoding":
			if !sawEncoding {
				c.encoding, sawEncoding = string(value), true
			}
		case "mergetag":
			if !sawMergeTag {
				c.mergeTag += string(value) + "\n"
				sawMergeTag, cont = true, &c.mergeTag
			}
		case "gpgsig":
			c.pgpSignature += string(value) + "\n"
			cont = &c.pgpSignature
		}
		if last {
			return c, nil
		}
	}
}

// decodeTag decodes a tag object's content: object, type and tag lines
// first and in this order, then an optional tagger, other headers (ignored),
// a blank line and the message, whose trailing signature block (OpenPGP,
// X.509 or SSH armor) is split off.
func decodeTag(data []byte) (*tagObject, error) {
	const kind = "tag"
	t := &tagObject{}
	l := &lineReader{data: data}
	h, last, err := l.openingID(kind, "object")
	if err != nil {
		return nil, err
	}
	t.target = h
	if last {
		return t, nil
	}
	value, last, err := l.requiredHeader(kind, "type", "must follow object")
	if err != nil {
		return nil, err
	}
	switch tt := ObjectType(value); tt {
	// go-git accepts the two pack-only delta types too; so does dome, to
	// decode every tag go-git decoded.
	case TypeCommit, TypeTree, TypeBlob, TypeTag, "ofs-delta", "ref-delta":
		t.targetType = tt
	default:
		return nil, malformed(kind, fmt.Sprintf("invalid object type %q", value))
	}
	if last {
		return t, nil
	}
	if value, last, err = l.requiredHeader(kind, "tag", "must follow type"); err != nil {
		return nil, err
	}
	t.name = string(value)
	if last {
		return t, nil
	}
	line, last := l.next()
	if len(line) == 0 {
		return t, nil
	}
	if !isBlankLine(line) {
		if key, value := splitHeader(line); key == "tagger" {
			t.tagger = decodeSignature(value)
		}
		// Other headers up to the blank line are ignored.
		for !isBlankLine(line) {
			if last {
				return t, nil
			}
			if line, last = l.next(); len(line) == 0 {
				return t, nil
			}
		}
	}
	msg := l.rest()
	if at := signatureStart(msg); at >= 0 {
		t.pgpSignature = string(msg[at:])
		msg = msg[:at]
	}
	t.message = string(msg)
	return t, nil
}

// signatureBegins are the first lines of the signature blocks git splits
// off a tag message (gpg-interface.c): OpenPGP, X.509 (gpgsm) and SSH.
var signatureBegins = []string{
	"-----BEGIN PGP SIGNATURE-----",
	"-----BEGIN PGP MESSAGE-----",
	"-----BEGIN CERTIFICATE-----",
	"-----BEGIN SIGNED MESSAGE-----",
	"-----BEGIN SSH SIGNATURE-----",
}

// signatureStart returns where the last line that begins a signature block
// starts (git's parse_signed_buffer), or -1.
func signatureStart(b []byte) int {
	match := -1
	for n := 0; n < len(b); {
		rest := b[n:]
		for _, begin := range signatureBegins {
			if bytes.HasPrefix(rest, []byte(begin)) {
				match = n
				break
			}
		}
		eol := bytes.IndexByte(rest, '\n')
		if eol < 0 {
			break
		}
		n += eol + 1
	}
	return match
}

// tagSignedPayload returns the bytes a tag's signature signs: the object
// without its trailing signature block and without gpgsig and gpgsig-sha256
// header lines (with their continuation lines), as git verify-tag checks.
func tagSignedPayload(raw []byte) []byte {
	if at := signatureStart(raw); at >= 0 {
		raw = raw[:at]
	}
	var out []byte
	inBody, skipping := false, false
	l := &lineReader{data: raw}
	for {
		line, last := l.next()
		write := true
		if !inBody {
			switch {
			case skipping && len(line) > 0 && line[0] == ' ':
				write = false
			case bytes.HasPrefix(line, []byte("gpgsig ")) || bytes.HasPrefix(line, []byte("gpgsig-sha256 ")):
				skipping, write = true, false
			case isBlankLine(line):
				skipping, inBody = false, true
			default:
				skipping = false
			}
		}
		if write {
			out = append(out, line...)
		}
		if last {
			return out
		}
	}
}

// decodeSignature reads "Name <email> 1700000000 +0100" leniently, as
// go-git does: without both angle brackets the signature stays empty, and
// a time or zone that does not parse is left out.
func decodeSignature(b []byte) Signature {
	var s Signature
	open := bytes.LastIndexByte(b, '<')
	end := bytes.LastIndexByte(b, '>')
	if open == -1 || end == -1 || end < open {
		return s
	}
	s.Name = string(bytes.Trim(b[:open], " "))
	s.Email = string(b[open+1 : end])
	if end+2 < len(b) {
		s.When = decodeWhen(b[end+2:], s.When)
	}
	return s
}

// decodeWhen reads "<unix seconds> <+hhmm>"; it returns when unchanged if
// the seconds do not parse, and the time in UTC if the zone does not.
func decodeWhen(b []byte, when time.Time) time.Time {
	space := bytes.IndexByte(b, ' ')
	if space == -1 {
		space = len(b)
	}
	ts, err := strconv.ParseInt(string(b[:space]), 10, 64)
	if err != nil {
		return when
	}
	when = time.Unix(ts, 0).In(time.UTC)
	tzStart := space + 1
	if tzStart+5 > len(b) {
		return when
	}
	zone := string(b[tzStart : tzStart+5])
	hours, err1 := strconv.ParseInt(zone[0:3], 10, 64)
	mins, err2 := strconv.ParseInt(zone[3:], 10, 64)
	if err1 != nil || err2 != nil {
		return when
	}
	// As go-git computes it: "-0130" is -1h and -30m, and "-0030" (hours
	// of zero are not negative) comes out as +30m.
	if hours < 0 {
		mins = -mins
	}
	return when.In(time.FixedZone("", int(hours*60*60+mins*60)))
}

// appendSignature writes "Name <email> <unix seconds> <+hhmm>"; a time
// before 1970 is written as 0, as go-git does.
func appendSignature(b []byte, s Signature) []byte {
	b = append(b, s.Name...)
	b = append(b, " <"...)
	b = append(b, s.Email...)
	b = append(b, "> "...)
	u := s.When.Unix()
	if u < 0 {
		u = 0
	}
	b = strconv.AppendInt(b, u, 10)
	b = append(b, ' ')
	return s.When.AppendFormat(b, "-0700")
}

// encodeCommit returns the content of the commit object c describes; the
// identities are cleaned as git cleans them (identOf).
func encodeCommit(c CommitSpec) []byte {
	b := make([]byte, 0, 200+len(c.Message)+48*len(c.Parents))
	b = append(b, "tree "...)
	b = append(b, c.Tree.String()...)
	b = append(b, '\n')
	for _, p := range c.Parents {
		b = append(b, "parent "...)
		b = append(b, p.String()...)
		b = append(b, '\n')
	}
	b = append(b, "author "...)
	b = appendSignature(b, identOf(c.Author))
	b = append(b, "\ncommitter "...)
	b = appendSignature(b, identOf(c.Committer))
	b = append(b, "\n\n"...)
	return append(b, c.Message...)
}

// encodeTag returns the content of the tag object t describes, with the
// armored signature sig ("" for none) appended to the message, as git
// stores it. The tagger line is left out when the tagger is empty (no
// name, e-mail or time), as go-git does.
func encodeTag(t TagSpec, targetType ObjectType, sig string) []byte {
	b := make([]byte, 0, 200+len(t.Message)+len(sig))
	b = append(b, "object "...)
	b = append(b, t.Target.String()...)
	b = append(b, "\ntype "...)
	b = append(b, targetType...)
	b = append(b, "\ntag "...)
	b = append(b, t.Name...)
	b = append(b, '\n')
	if tagger := identOf(t.Tagger); tagger.Name != "" || tagger.Email != "" || !tagger.When.IsZero() {
		b = append(b, "tagger "...)
		b = appendSignature(b, tagger)
		b = append(b, '\n')
	}
	b = append(b, '\n')
	b = append(b, t.Message...)
	return append(b, sig...)
}
