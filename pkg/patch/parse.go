package patch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/internal/lazyre"
	"github.com/dome-registry/dome/pkg/errkind"
)

// Patch is one change: the diffs of one commit (one mbox message of
// `git format-patch`, one commit of `git show`) or a whole plain `git diff`.
type Patch struct {
	Header Header
	Files  []*File
}

// Header is the commit metadata a patch carries (empty for a plain diff).
type Header struct {
	Commit  string // the commit id on the "From <sha>" or "commit <sha>" line
	Author  string // name
	Email   string
	Date    string // as written
	Subject string // with "[PATCH ...]" removed
	Body    string // the rest of the message, without the trailing newline
}

// File is the diff of one path.
type File struct {
	OldPath, NewPath string // "" when the file is created / deleted
	OldMode, NewMode Mode   // 0 when the patch does not say
	IsNew, IsDelete  bool
	IsRename, IsCopy bool
	Similarity       int    // from "similarity index N%", -1 when absent
	OldOID, NewOID   string // abbreviated or full hex from the index line
	Hunks            []*Hunk
	Binary           *Binary // a "GIT binary patch"
	BinaryNoData     bool    // "Binary files ... differ": no data to apply
	Line             int     // line of the "diff --git" header in the input
	addAdd           bool    // (Apply) a creation merged into the file already there
	// newModeFromIndex: NewMode is the index line's mode, which git reads
	// as the old mode only: the file keeps the mode it has in the tree.
	newModeFromIndex bool
}

// Path is the path the file has after the patch (or before, for a deletion).
func (f *File) Path() string {
	if f.IsDelete {
		return f.OldPath
	}
	return f.NewPath
}

// Hunk is one "@@ -a,b +c,d @@" fragment.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Section            string // text after the second "@@", trimmed
	Lines              []Line
	Line               int // line of the header in the input
}

// Line is one body line of a hunk. Text includes the final "\n" unless the
// patch marks the line "\ No newline at end of file".
type Line struct {
	Op   byte // ' ', '-' or '+'
	Text string
}

// BinaryKind tells a literal from a delta binary patch.
type BinaryKind int

// Binary patch forms.
const (
	BinaryLiteral BinaryKind = iota + 1
	BinaryDelta
)

// Binary is the forward part of a "GIT binary patch" (inflated).
type Binary struct {
	Kind BinaryKind
	Size int64
	Data []byte
}

// ParseOptions controls Parse.
type ParseOptions struct {
	Source   string // names the input in errors (a file path or "stdin")
	Strip    int    // leading path components to strip (git apply -p); DefaultStrip for a/ b/
	MaxBytes int64  // refuse larger inputs; 0 = DefaultMaxBytes
	// GuessStrip says Strip is a default, not the user's -p: as git apply
	// does, the first plain unified diff whose two names both lack a "/"
	// (diff -u old.txt new.txt) switches stripping to 0 for the rest.
	GuessStrip bool
}

// Defaults for ParseOptions.
const (
	DefaultStrip    = 1
	DefaultMaxBytes = 64 << 20
)

// Parse reads git-format diffs: `git diff`, `git format-patch` (one or many
// mbox messages) and `git show` output, and plain unified diffs (`diff -u`,
// `diff -ruN`: "---"/"+++" names, no "diff --git" line) as git apply reads
// them. It returns one Patch per message, or one for a plain diff. Paths are
// checked for safety (see CheckPath).
func Parse(data []byte, opts ParseOptions) ([]*Patch, error) {
	if opts.Source == "" {
		opts.Source = "patch"
	}
	max := opts.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	if int64(len(data)) > max {
		return nil, &errkind.InputError{Source: opts.Source, Problem: fmt.Sprintf("patch is %d bytes, over the limit of %d", len(data), max),
			Hint: "split the patch or raise the limit (--max-size)"}
	}
	if opts.Strip < 0 {
		return nil, &errkind.InputError{Source: opts.Source, Field: "-p", Problem: "strip count must not be negative"}
	}
	p := &parser{src: opts.Source, strip: opts.Strip, guess: opts.GuessStrip, lines: splitLines(data)}
	return p.parse()
}

type parser struct {
	src   string
	strip int
	guess bool // strip is a default that a plain diff's names may change
	lines []string
	i     int
}

// splitLines splits data into lines that keep their newlines. The lines
// are substrings of one copy of data: a string per line would be an
// allocation per line of every file a series touches.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := string(data)
	out := make([]string, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func (p *parser) errf(line int, format string, a ...any) error {
	return p.inputError(line, format, a...)
}

// inputError is errf's error, for a caller that adds to it.
func (p *parser) inputError(line int, format string, a ...any) *errkind.InputError {
	return &errkind.InputError{Source: p.src, Field: fmt.Sprintf("line %d", line), Problem: fmt.Sprintf(format, a...),
		Hint: "regenerate the patch with git diff, git format-patch or git show; a hand-edited hunk must keep its header counts right"}
}

var (
	mboxFrom  = lazyre.New(`^From ([0-9a-f]{40}) `)
	showStart = lazyre.New(`^commit ([0-9a-f]{40})\b`)
)

func (p *parser) parse() ([]*Patch, error) {
	var patches []*Patch
	var cur *Patch
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		switch {
		case mboxFrom().MatchString(l):
			cur = &Patch{Header: Header{Commit: mboxFrom().FindStringSubmatch(l)[1]}}
			patches = append(patches, cur)
			p.i++
			if err := p.mailHeader(&cur.Header); err != nil {
				return nil, err
			}
		case showStart().MatchString(l):
			cur = &Patch{Header: Header{Commit: showStart().FindStringSubmatch(l)[1]}}
			patches = append(patches, cur)
			p.i++
			p.showHeader(&cur.Header)
		case strings.HasPrefix(l, "diff --git "), p.traditionalStart():
			if cur == nil {
				cur = &Patch{}
				patches = append(patches, cur)
			}
			read := p.file
			if !strings.HasPrefix(l, "diff --git ") {
				read = p.traditional // a plain unified diff (diff -u)
			}
			f, err := read()
			if err != nil {
				return nil, err
			}
			cur.Files = append(cur.Files, f)
		case strings.HasPrefix(l, "Binary files ") || strings.HasPrefix(l, "GIT binary patch"):
			return nil, p.errf(p.i+1, "%q outside a \"diff --git\" section: a plain diff cannot carry a binary change", strings.TrimRight(l, "\n"))
		case strings.HasPrefix(l, "@@ -"):
			return nil, p.errf(p.i+1, "hunk %q without a file header (\"diff --git\", or \"---\" and \"+++\" lines)", strings.TrimRight(l, "\n"))
		default:
			p.i++
		}
	}
	if len(patches) == 0 {
		return nil, &errkind.InputError{Source: p.src, Problem: "no diff found (no \"diff --git\" section and no \"---\"/\"+++\"/\"@@\" unified diff)",
			Hint: "produce the patch with git diff, git format-patch, git show or diff -u"}
	}
	return patches, nil
}

// showHeader reads the header and indented message of `git show` output.
func (p *parser) showHeader(h *Header) {
	var msg []string
	for p.i < len(p.lines) {
		l := strings.TrimRight(p.lines[p.i], "\n")
		if strings.HasPrefix(l, "diff --git ") || showStart().MatchString(l) {
			break
		}
		switch {
		case strings.HasPrefix(l, "Author: "):
			h.Author, h.Email = splitAddress(strings.TrimPrefix(l, "Author: "))
		case strings.HasPrefix(l, "Date: "):
			h.Date = strings.TrimSpace(strings.TrimPrefix(l, "Date: "))
		case strings.HasPrefix(l, "    "):
			msg = append(msg, l[4:])
		case l == "" && len(msg) > 0:
			msg = append(msg, "")
		}
		p.i++
	}
	// (blank lines around the message go; a body's leading spaces stay,
	// as in the commit: Header.Message cleans the rest)
	text := strings.Trim(strings.Join(msg, "\n"), "\n")
	h.Subject, h.Body, _ = strings.Cut(text, "\n")
	h.Subject = strings.TrimSpace(h.Subject)
}

func splitAddress(s string) (name, email string) {
	if i := strings.LastIndex(s, "<"); i >= 0 && strings.HasSuffix(s, ">") {
		return strings.Trim(strings.TrimSpace(s[:i]), `"`), s[i+1 : len(s)-1]
	}
	return "", strings.TrimSpace(s)
}

// file parses one "diff --git" section.
func (p *parser) file() (*File, error) {
	start := p.i + 1
	f := &File{Similarity: -1, Line: start}
	header := strings.TrimSuffix(strings.TrimPrefix(p.lines[p.i], "diff --git "), "\n")
	p.i++
	var minus, plus string
	var haveMinus, havePlus bool
	for p.i < len(p.lines) {
		l := strings.TrimSuffix(p.lines[p.i], "\n")
		var err error
		switch {
		case strings.HasPrefix(l, "old mode "):
			f.OldMode, err = p.mode(l, "old mode ")
		case strings.HasPrefix(l, "new mode "):
			f.NewMode, err = p.mode(l, "new mode ")
			f.newModeFromIndex = false
		case strings.HasPrefix(l, "deleted file mode "):
			f.IsDelete = true
			f.OldMode, err = p.mode(l, "deleted file mode ")
		case strings.HasPrefix(l, "new file mode "):
			f.IsNew = true
			f.NewMode, err = p.mode(l, "new file mode ")
			f.newModeFromIndex = false
		case strings.HasPrefix(l, "rename from "):
			f.IsRename = true
			f.OldPath, err = p.name(strings.TrimPrefix(l, "rename from "), p.strip-1)
		case strings.HasPrefix(l, "rename to "):
			f.IsRename = true
			f.NewPath, err = p.name(strings.TrimPrefix(l, "rename to "), p.strip-1)
		case strings.HasPrefix(l, "copy from "):
			f.IsCopy = true
			f.OldPath, err = p.name(strings.TrimPrefix(l, "copy from "), p.strip-1)
		case strings.HasPrefix(l, "copy to "):
			f.IsCopy = true
			f.NewPath, err = p.name(strings.TrimPrefix(l, "copy to "), p.strip-1)
		case strings.HasPrefix(l, "similarity index "), strings.HasPrefix(l, "dissimilarity index "):
			v := strings.TrimSuffix(l[strings.LastIndexByte(l, ' ')+1:], "%")
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 0 || n > 100 {
				err = p.errf(p.i+1, "bad similarity %q", l)
			}
			f.Similarity = n
		case strings.HasPrefix(l, "index "):
			err = p.index(f, strings.TrimPrefix(l, "index "))
		case strings.HasPrefix(l, "--- ") && !haveMinus:
			minus, haveMinus = strings.TrimPrefix(l, "--- "), true
		case strings.HasPrefix(l, "+++ ") && haveMinus && !havePlus:
			plus, havePlus = strings.TrimPrefix(l, "+++ "), true
		default:
			goto body
		}
		if err != nil {
			return nil, err
		}
		p.i++
	}
body:
	if haveMinus != havePlus {
		return nil, p.errf(p.i+1, "\"---\" line without \"+++\" line")
	}
	if err := p.names(f, header, minus, plus, haveMinus); err != nil {
		return nil, err
	}
	if p.i < len(p.lines) {
		l := p.lines[p.i]
		switch {
		case strings.HasPrefix(l, "GIT binary patch"):
			p.i++
			b, err := p.binary()
			if err != nil {
				return nil, err
			}
			f.Binary = b
			return f, nil
		case strings.HasPrefix(l, "Binary files "):
			p.i++
			f.BinaryNoData = true
			return f, nil
		}
	}
	for p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], "@@ -") {
		h, err := p.hunk()
		if err != nil {
			return nil, err
		}
		f.Hunks = append(f.Hunks, h)
	}
	if haveMinus && len(f.Hunks) == 0 {
		return nil, p.errf(p.i+1, "%s: \"---\"/\"+++\" lines without any hunk", f.Path())
	}
	return f, nil
}

func (p *parser) mode(l, prefix string) (Mode, error) {
	m, ok := parseMode(strings.TrimSpace(strings.TrimPrefix(l, prefix)))
	if !ok {
		return 0, p.errf(p.i+1, "bad mode in %q", l)
	}
	return m, nil
}

func (p *parser) index(f *File, s string) error {
	ids, mode, hasMode := strings.Cut(s, " ")
	a, b, ok := strings.Cut(ids, "..")
	if !ok || !isHex(a) || !isHex(b) || len(a) < 4 || len(b) < 4 || len(a) > 40 || len(b) > 40 {
		return p.errf(p.i+1, "bad index line %q", "index "+s)
	}
	f.OldOID, f.NewOID = a, b
	if hasMode {
		m, ok := parseMode(strings.TrimSpace(mode))
		if !ok {
			return p.errf(p.i+1, "bad mode in index line %q", "index "+s)
		}
		if f.OldMode == 0 {
			f.OldMode = m
		}
		if f.NewMode == 0 {
			f.NewMode, f.newModeFromIndex = m, true
		}
	}
	return nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// names settles OldPath and NewPath from the rename/copy lines, the ---/+++
// lines or the "diff --git" line, in git apply's order of preference.
func (p *parser) names(f *File, header, minus, plus string, have bool) error {
	line := f.Line
	// "new file mode" and "deleted file mode" take the name from the
	// "diff --git" line (git's gitdiff_newfile and gitdiff_delete); a name
	// known from there or from rename/copy lines must then be the one on
	// the ---/+++ line too: a patch may not show one path and touch another.
	if f.IsNew && f.NewPath == "" || f.IsDelete && f.OldPath == "" {
		if def, err := p.headerName(header); err == nil {
			if f.IsNew && f.NewPath == "" {
				f.NewPath = def
			}
			if f.IsDelete && f.OldPath == "" {
				f.OldPath = def
			}
		}
	}
	if have {
		null, err := p.verifyName(minus, f.IsNew, &f.OldPath, "old", line)
		if err != nil {
			return err
		}
		f.IsNew = f.IsNew || null
		if null, err = p.verifyName(plus, f.IsDelete, &f.NewPath, "new", line); err != nil {
			return err
		}
		f.IsDelete = f.IsDelete || null
	}
	if f.OldPath == "" && !f.IsNew || f.NewPath == "" && !f.IsDelete {
		name, err := p.headerName(header)
		if err != nil {
			return err
		}
		if f.OldPath == "" && !f.IsNew {
			f.OldPath = name
		}
		if f.NewPath == "" && !f.IsDelete {
			f.NewPath = name
		}
	}
	if f.IsNew && f.IsDelete {
		return p.errf(line, "a diff both creates and deletes %s", f.NewPath)
	}
	if f.IsNew {
		f.OldPath = ""
	}
	if f.IsDelete {
		f.NewPath = ""
	}
	if (f.IsRename || f.IsCopy) && (f.OldPath == "" || f.NewPath == "") {
		return p.errf(line, "rename or copy without both names")
	}
	return p.checkPaths(f, line, "a patch may only name relative paths inside the repository")
}

// verifyName reads the name s of a ---/+++ line for one side of a file
// diff, as git's gitdiff_verify_name: with no name known yet it sets it (or,
// for /dev/null, reports the side absent); a known name must be repeated
// exactly; a side the header says is absent (isnull) must be /dev/null.
func (p *parser) verifyName(s string, isnull bool, name *string, side string, line int) (bool, error) {
	switch {
	case *name == "" && !isnull:
		if isDevNull(s) {
			return true, nil
		}
		n, err := p.name(s, p.strip)
		*name = n
		return false, err
	case *name != "":
		if isnull {
			return false, p.errf(line, "expected /dev/null on the %s side, got %s", side, *name)
		}
		n, err := p.name(s, p.strip)
		if err != nil || isDevNull(s) || n != *name {
			return false, p.errf(line, "inconsistent %s file name: %q from the header lines, %q on the ---/+++ line", side, *name, s)
		}
		return false, nil
	default:
		if !isDevNull(s) {
			return false, p.errf(line, "expected /dev/null on the %s side, got %q", side, s)
		}
		return true, nil
	}
}

// name parses a path as written in a ---/+++ or rename line: maybe C-quoted,
// maybe followed by a tab and a timestamp, with strip components removed.
func (p *parser) name(s string, strip int) (string, error) {
	var err error
	if strings.HasPrefix(s, `"`) {
		s, _, err = unquote(s)
		if err != nil {
			return "", p.errf(p.i+1, "%v", err)
		}
	} else if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return p.stripName(s, strip)
}

// stripName removes strip leading components from a name on a ---/+++,
// rename or copy line as git's find_name does: every "/" counts as one (so
// "a//etc/evil" loses "a/" and keeps the absolute "/etc/evil", which
// CheckPath then refuses), and runs of "/" left inside are squashed to one.
func (p *parser) stripName(s string, strip int) (string, error) {
	orig := s
	for ; strip > 0; strip-- {
		i := strings.IndexByte(s, '/')
		if i < 0 {
			return "", p.errf(p.i+1, "cannot strip %d leading components from %q", p.strip, orig)
		}
		s = s[i+1:]
	}
	return squashSlash(s), nil
}

// squashSlash is git's squash_slash: "a//b" becomes "a/b" ("//a" "/a").
func squashSlash(s string) string {
	if !strings.Contains(s, "//") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '/' && i > 0 && s[i-1] == '/' {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// skipTreePrefix strips the names of a "diff --git" line as git's
// skip_tree_prefix does: every "/" counts, nothing is squashed, and a name
// whose last stripped "/" is its first byte (an absolute path) is no name.
func skipTreePrefix(s string, strip int) (string, bool) {
	if strip == 0 {
		return s, !strings.HasPrefix(s, "/")
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '/' {
			continue
		}
		if strip--; strip <= 0 {
			if i == 0 {
				return "", false
			}
			return s[i+1:], true
		}
	}
	return "", false
}

// headerName finds the path in a "diff --git a/x b/x" line when no other line
// names it: both names must agree after stripping (git's git_header_name).
func (p *parser) headerName(h string) (string, error) {
	bad := p.errf(p.i+1, "cannot tell the path from %q", "diff --git "+h)
	if strings.HasPrefix(h, `"`) {
		a, rest, err := unquote(h)
		if err != nil {
			return "", bad
		}
		rest = strings.TrimLeft(rest, " ")
		var b string
		if strings.HasPrefix(rest, `"`) {
			b, _, err = unquote(rest)
			if err != nil {
				return "", bad
			}
		} else {
			b = rest
		}
		sa, ok1 := skipTreePrefix(a, p.strip)
		sb, ok2 := skipTreePrefix(b, p.strip)
		if !ok1 || !ok2 || sa != sb {
			return "", bad
		}
		return sa, nil
	}
	if i := strings.Index(h, ` "`); i >= 0 && strings.HasSuffix(h, `"`) {
		b, _, err := unquote(h[i+1:])
		if err == nil {
			sa, ok1 := skipTreePrefix(h[:i], p.strip)
			sb, ok2 := skipTreePrefix(b, p.strip)
			if ok1 && ok2 && sa == sb {
				return sa, nil
			}
		}
	}
	// Unquoted: the names are the same length after stripping, so try the
	// middle space first, then every space.
	if len(h)%2 == 1 {
		mid := len(h) / 2
		if h[mid] == ' ' {
			sa, ok1 := skipTreePrefix(h[:mid], p.strip)
			sb, ok2 := skipTreePrefix(h[mid+1:], p.strip)
			if ok1 && ok2 && sa == sb && sa != "" {
				return sa, nil
			}
		}
	}
	for i := 0; i < len(h); i++ {
		if h[i] != ' ' {
			continue
		}
		sa, ok1 := skipTreePrefix(h[:i], p.strip)
		sb, ok2 := skipTreePrefix(h[i+1:], p.strip)
		if ok1 && ok2 && sa == sb && sa != "" {
			return sa, nil
		}
	}
	return "", bad
}

// unquote reads a C-quoted string at the start of s (git's quote_c_style) and
// returns it and the rest of s.
func unquote(s string) (string, string, error) {
	if !strings.HasPrefix(s, `"`) {
		return "", s, fmt.Errorf("not a quoted name: %q", s)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			i++
			if i >= len(s) {
				return "", "", fmt.Errorf("unterminated escape in %q", s)
			}
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOct(s[i+1]) || !isOct(s[i+2]) {
					return "", "", fmt.Errorf("bad octal escape in %q", s)
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", "", fmt.Errorf("unknown escape \\%c in %q", e, s)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("unterminated quoted name %q", s)
}

func isOct(c byte) bool { return c >= '0' && c <= '7' }

// hunk parses one fragment; the header's counts must agree with the body.
func (p *parser) hunk() (*Hunk, error) {
	hl := strings.TrimSuffix(p.lines[p.i], "\n")
	h := &Hunk{Line: p.i + 1}
	if err := parseHunkHeader(hl, h); err != nil {
		return nil, p.errf(p.i+1, "bad hunk header %q: %v", hl, err)
	}
	p.i++
	oldLeft, newLeft := h.OldLines, h.NewLines
	for oldLeft > 0 || newLeft > 0 {
		if p.i >= len(p.lines) {
			return nil, p.errf(h.Line, "hunk header %q counts disagree with its body: the patch ends %d old and %d new lines early", hl, oldLeft, newLeft)
		}
		l := p.lines[p.i]
		op := l[0]
		text := l[1:]
		if l == "\n" {
			op, text = ' ', "\n"
		}
		switch op {
		case ' ':
			oldLeft--
			newLeft--
		case '-':
			oldLeft--
		case '+':
			newLeft--
		case '\\':
			if len(h.Lines) == 0 {
				return nil, p.errf(p.i+1, "\"\\\" line before any hunk line")
			}
			noEOL(h)
			p.i++
			continue
		default:
			return nil, p.errf(h.Line, "hunk header %q counts disagree with its body: line %d (%q) ends it %d old and %d new lines early",
				hl, p.i+1, strings.TrimRight(l, "\n"), oldLeft, newLeft)
		}
		if oldLeft < 0 || newLeft < 0 {
			return nil, p.errf(h.Line, "hunk header %q counts disagree with its body at line %d", hl, p.i+1)
		}
		if !strings.HasSuffix(text, "\n") {
			// the input ends without a newline: only valid if a "\" line would follow
			return nil, p.errf(p.i+1, "hunk line without a newline")
		}
		h.Lines = append(h.Lines, Line{Op: op, Text: text})
		p.i++
	}
	if p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], "\\") {
		noEOL(h)
		p.i++
	}
	if p.i < len(p.lines) {
		l := p.lines[p.i]
		// (a "---" line may start the next file of a plain diff: diff -u output concatenated)
		if l[0] == '+' || l[0] == ' ' || l[0] == '-' && l != "-- \n" && l != "--\n" && !p.traditionalStart() {
			return nil, p.errf(h.Line, "hunk header %q counts disagree with its body: line %d (%q) follows the hunk",
				hl, p.i+1, strings.TrimRight(l, "\n"))
		}
	}
	return h, nil
}

// noEOL drops the newline of the last hunk line ("\ No newline at end of file").
func noEOL(h *Hunk) {
	last := &h.Lines[len(h.Lines)-1]
	last.Text = strings.TrimSuffix(last.Text, "\n")
}

func parseHunkHeader(l string, h *Hunk) error {
	rest, ok := strings.CutPrefix(l, "@@ -")
	if !ok {
		return fmt.Errorf("no \"@@ -\"")
	}
	old, rest, ok := strings.Cut(rest, " +")
	if !ok {
		return fmt.Errorf("no \" +\"")
	}
	nw, rest, ok := strings.Cut(rest, " @@")
	if !ok {
		return fmt.Errorf("no closing \" @@\"")
	}
	var err error
	if h.OldStart, h.OldLines, err = parseRange(old); err != nil {
		return err
	}
	if h.NewStart, h.NewLines, err = parseRange(nw); err != nil {
		return err
	}
	h.Section = strings.TrimSpace(rest)
	return nil
}

func parseRange(s string) (start, n int, err error) {
	a, b, has := strings.Cut(s, ",")
	start, err = strconv.Atoi(a)
	if err != nil || start < 0 || a[0] == '+' {
		return 0, 0, fmt.Errorf("bad line number %q", a)
	}
	n = 1
	if has {
		n, err = strconv.Atoi(b)
		if err != nil || n < 0 || b[0] == '+' {
			return 0, 0, fmt.Errorf("bad line count %q", b)
		}
	}
	if start > 1<<30 || n > 1<<30 {
		return 0, 0, fmt.Errorf("range %q too large", s)
	}
	return start, n, nil
}
