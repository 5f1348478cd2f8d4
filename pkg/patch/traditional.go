package patch

import (
	"strings"
	"time"

	"github.com/dome-registry/dome/internal/lazyre"
)

// Plain unified diffs (GNU diff -u, diff -ruN, most tools' "unified" output)
// carry no "diff --git" line: a file's diff is a "--- old" line, a
// "+++ new" line and hunks. They are read as git apply reads them
// (apply.c parse_traditional_patch): /dev/null or an epoch timestamp marks a
// created or deleted file, and a modified file takes one name for both sides.
// They say nothing of modes, renames, binary content or blob ids, so a file
// keeps its mode and a three-way fallback has no preimage to merge from.

// traditionalStart reports whether the current line starts a plain diff:
// "--- ", then "+++ ", then a hunk header (git's find_header test).
func (p *parser) traditionalStart() bool {
	return p.i+2 < len(p.lines) &&
		strings.HasPrefix(p.lines[p.i], "--- ") &&
		strings.HasPrefix(p.lines[p.i+1], "+++ ") &&
		strings.HasPrefix(p.lines[p.i+2], "@@ -")
}

// traditional parses one file of a plain unified diff.
func (p *parser) traditional() (*File, error) {
	f := &File{Similarity: -1, Line: p.i + 1}
	minus := strings.TrimSuffix(strings.TrimPrefix(p.lines[p.i], "--- "), "\n")
	plus := strings.TrimSuffix(strings.TrimPrefix(p.lines[p.i+1], "+++ "), "\n")
	minus = strings.TrimSuffix(minus, "\r")
	plus = strings.TrimSuffix(plus, "\r")
	if p.guess {
		// git apply: names without a "/" (diff -u a.txt b.txt) mean -p0.
		a, b := p.guessStrip(minus), p.guessStrip(plus)
		if a < 0 {
			a = b
		}
		if a >= 0 && a == b {
			p.strip, p.guess = a, false
		}
	}
	oldName, err := p.traditionalName(minus)
	if err != nil {
		return nil, err
	}
	newName, err := p.traditionalName(plus)
	if err != nil {
		return nil, err
	}
	switch {
	case isDevNull(minus) && isDevNull(plus):
		return nil, p.errf(f.Line, "both names are /dev/null")
	case isDevNull(minus):
		f.IsNew, f.NewPath = true, newName
	case isDevNull(plus):
		f.IsDelete, f.OldPath = true, oldName
	default:
		// One name for both sides; of "x" and "x.orig" git takes the shorter.
		name := newName
		if len(oldName) < len(newName) && strings.HasPrefix(newName, oldName) {
			name = oldName
		}
		switch {
		case hasEpochTimestamp(minus): // diff -N: the file did not exist
			f.IsNew, f.NewPath = true, name
		case hasEpochTimestamp(plus):
			f.IsDelete, f.OldPath = true, name
		default:
			f.OldPath, f.NewPath = name, name
		}
	}
	if err := p.checkPaths(f, f.Line, "a patch may only name relative paths inside the repository; for diff -u a.txt b.txt output use -p0"); err != nil {
		return nil, err
	}
	p.i += 2
	for p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], "@@ -") {
		h, err := p.hunk()
		if err != nil {
			return nil, err
		}
		f.Hunks = append(f.Hunks, h)
	}
	return f, nil
}

// traditionalName is the path on a "---"/"+++" line with the timestamp and
// p.strip leading components removed ("" for /dev/null).
func (p *parser) traditionalName(s string) (string, error) {
	if isDevNull(s) {
		return "", nil
	}
	name, err := p.rawTraditionalName(s)
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", p.errf(p.i+1, "no file name in %q", s)
	}
	return p.stripName(name, p.strip)
}

// rawTraditionalName is the path on a "---"/"+++" line before stripping.
func (p *parser) rawTraditionalName(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		name, _, err := unquote(s)
		if err != nil {
			return "", p.errf(p.i+1, "%v", err)
		}
		return name, nil
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		return s[:i], nil
	}
	// No tab: a timestamp may follow after spaces (git's diff_timestamp_len).
	if loc := trailingDate().FindStringIndex(s); loc != nil {
		return s[:loc[0]], nil
	}
	return strings.TrimRight(s, " "), nil
}

// guessStrip is git apply's guess_p_value at the top of the repository: 0
// for a name without "/", -1 (no guess) otherwise.
func (p *parser) guessStrip(s string) int {
	if isDevNull(s) {
		return -1
	}
	name, err := p.rawTraditionalName(s)
	if err != nil || name == "" || strings.Contains(name, "/") {
		return -1
	}
	return 0
}

// isDevNull is git's is_dev_null: "/dev/null" followed by white space or
// the end of the line.
func isDevNull(s string) bool {
	rest, ok := strings.CutPrefix(s, "/dev/null")
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// trailingDate matches the timestamps diff programs append to names:
// GNU diff's "2006-01-02 15:04:05.000000000 -0700" and the ctime form
// "Mon Jan  2 15:04:05 2006".
var trailingDate = lazyre.New(`[ \t]+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?( ?[+-]\d{4})?|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})$`)

// hasEpochTimestamp reports whether the timestamp after the name is the
// Unix epoch, which diff -N writes for a file that does not exist.
func hasEpochTimestamp(s string) bool {
	var ts string
	if i := strings.IndexByte(s, '\t'); i >= 0 && !strings.HasPrefix(s, `"`) {
		ts = strings.TrimSpace(s[i+1:])
	} else if loc := trailingDate().FindStringIndex(s); loc != nil {
		ts = strings.TrimSpace(s[loc[0]:])
	}
	if ts == "" {
		return false
	}
	for _, layout := range []string{
		"2006-01-02 15:04:05.999999999 -0700", "2006-01-02 15:04:05 -0700",
		"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05", "Mon Jan _2 15:04:05 2006",
	} {
		if t, err := time.Parse(layout, ts); err == nil {
			return t.Unix() == 0
		}
	}
	return false
}
