package gitpath

import (
	"fmt"
	"strings"
)

// ModeSymlink is the tree entry mode of a symbolic link. Only the file type
// of a mode matters to Verify: some names are refused for symlinks alone.
const ModeSymlink = 0o120000

// Error is a refused path: Path as given, Reason in words. Beyond is set
// when the rule is one of the package's own, beyond git's verify_path
// (control bytes; .gitattributes, .gitignore and .mailmap as symlinks).
type Error struct {
	Path   string
	Reason string
	Beyond bool
}

func (e *Error) Error() string { return fmt.Sprintf("invalid path %q: %s", e.Path, e.Reason) }

// Verify reports whether path (slash-separated, relative to the top of the
// tree) may name an entry of mode mode in a git tree, as git's verify_path
// does with core.protectNTFS and core.protectHFS on, plus the two rules of
// its own the package documents. It returns an *Error saying why not.
func Verify(path string, mode uint32) error {
	bad := func(reason string) error { return &Error{Path: path, Reason: reason} }
	if path == "" {
		return bad("empty path")
	}
	for i := 0; i < len(path); i++ {
		if c := path[i]; c < 0x20 || c == 0x7f {
			return &Error{Path: path, Reason: fmt.Sprintf("holds the control byte 0x%02x", c), Beyond: true}
		}
	}
	link := mode&0o170000 == ModeSymlink
	// The walk below is verify_path_internal: every component start is
	// checked for the HFS and NTFS spellings of .git (and, for a symlink,
	// of .gitmodules); a component may not start with "/" (empty or
	// absolute) and "."-names go through verify_dotfile; after a
	// backslash (a separator to Windows) the NTFS checks run again.
	i := 0
	for {
		rest := path[i:]
		if rest == "" {
			if i == 0 {
				return bad("empty path")
			}
			return bad("ends with a slash")
		}
		switch c := rest[0]; {
		case c == '/' && i == 0:
			return bad("absolute path")
		case c == '/':
			return bad("empty path component (\"//\")")
		case c == '.':
			if reason := dotfile(rest[1:], link); reason != "" {
				return bad(reason)
			}
		}
		if isHFSDot(rest, "git") {
			return bad(".git spelled with characters HFS+ ignores (core.protectHFS)")
		}
		if link && isHFSDot(rest, "gitmodules") {
			return bad(".gitmodules may not be a symlink (HFS+ spelling)")
		}
		if isNTFSDotGit(rest) {
			return bad("a name NTFS resolves to .git (trailing dot or space, the 8.3 name git~1 or an alternate data stream; core.protectNTFS)")
		}
		if link && isNTFSDot(rest, "gitmodules", "gi7eba") {
			return bad(".gitmodules may not be a symlink (NTFS spelling)")
		}
		// Scan the rest of the component; stop after the next "/".
		i++
		for {
			if i >= len(path) {
				return linkExtras(path, link)
			}
			c := path[i]
			i++
			if c == '/' {
				break
			}
			if c == '\\' {
				rest := path[i:]
				if isNTFSDotGit(rest) {
					return bad("a name NTFS resolves to .git after a backslash (core.protectNTFS)")
				}
				if link && isNTFSDot(rest, "gitmodules", "gi7eba") {
					return bad(".gitmodules may not be a symlink (NTFS spelling after a backslash)")
				}
			}
		}
	}
}

// IsDotGit reports whether the path component name is .git in any case or
// any spelling NTFS or HFS+ resolves to .git (".git.", "git~1",
// ".git::$INDEX_ALLOCATION", ".g\u200cit"): for checks of where a symlink
// points, as well as of paths.
func IsDotGit(name string) bool {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	return asciiEqualFold(name, ".git") || isNTFSDotGit(name) || isHFSDot(name, "git")
}

// VerifyName checks one tree entry name (no "/") for an entry of mode mode.
func VerifyName(name string, mode uint32) error {
	if strings.IndexByte(name, '/') >= 0 {
		return &Error{Path: name, Reason: "a tree entry name holds \"/\""}
	}
	return Verify(name, mode)
}

// dotfile is git's verify_dotfile: rest follows a component's leading ".".
func dotfile(rest string, link bool) string {
	at := func(i int) byte {
		if i < len(rest) {
			return rest[i]
		}
		return 0
	}
	switch at(0) {
	case 0, '/':
		return `path component "."`
	case '.':
		if at(1) == 0 || at(1) == '/' {
			return `path component ".."`
		}
	case 'g', 'G':
		if lower(at(1)) != 'i' || lower(at(2)) != 't' {
			break
		}
		if at(3) == 0 || at(3) == '/' {
			return "a .git component (in any case)"
		}
		if link && len(rest) >= 10 && asciiEqualFold(rest[3:10], "modules") && (at(10) == 0 || at(10) == '/') {
			return ".gitmodules may not be a symlink"
		}
	}
	return ""
}

// linkExtras refuses a symlink whose last component is .gitattributes,
// .gitignore or .mailmap (or an HFS or NTFS alias): beyond verify_path, as
// git fsck reports them and git does not follow them.
func linkExtras(path string, link bool) error {
	if !link {
		return nil
	}
	last := path[strings.LastIndexByte(path, '/')+1:]
	for _, n := range []struct{ name, short string }{
		{"gitattributes", "gi7d29"}, {"gitignore", "gi250a"}, {"mailmap", "maba30"},
	} {
		if isHFSDot(last, n.name) || isNTFSDot(last, n.name, n.short) {
			return &Error{Path: path, Reason: "." + n.name + " may not be a symlink (git does not follow it)", Beyond: true}
		}
	}
	return nil
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiEqualFold compares as C's strncasecmp does in the C locale: ASCII
// letters fold, every other byte is itself (no Unicode folding).
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}
