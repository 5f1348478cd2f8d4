package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/readlimit"
)

// configLimit bounds a git config file read whole; real ones are a few KiB.
const configLimit = 4 << 20

// gitConfig is a git config file as git-config(1) describes its syntax and
// git's config.c reads it: "[section]" and `[section "subsection"]`
// headers (and the deprecated "[section.subsection]", whose subsection is
// lowercased), "key = value" lines, keys without "=" (a boolean true;
// read as a string, as here, they are empty, as `git config --get` prints
// them), double quotes that keep white space, the escapes \" \\ \n \t \b,
// a backslash before a newline continuing the value, and "#" or ";"
// comments. Section and key names are case-insensitive, subsections are
// not; the last of several values wins. include and includeIf are not
// followed (go-git did not follow them either).
type gitConfig struct {
	entries []configEntry
}

type configEntry struct {
	section    string // lowercased
	subsection string
	hasSub     bool   // a subsection, possibly empty (`[a ""]` is not [a])
	key        string // lowercased
	value      string
	noValue    bool // "key" without "="
}

// get returns the last value of a key (section and key in any case).
func (c *gitConfig) get(section, subsection, key string) (string, bool) {
	for i := len(c.entries) - 1; i >= 0; i-- {
		if c.entries[i].is(section, subsection, key) {
			return c.entries[i].value, true
		}
	}
	return "", false
}

// getAll returns every value of a key, in file order.
func (c *gitConfig) getAll(section, subsection, key string) []string {
	var out []string
	for _, e := range c.entries {
		if e.is(section, subsection, key) {
			out = append(out, e.value)
		}
	}
	return out
}

// is reports whether e is the key section.key (subsection "") or
// section.subsection.key.
func (e *configEntry) is(section, subsection, key string) bool {
	return e.hasSub == (subsection != "") && e.subsection == subsection &&
		strings.EqualFold(e.section, section) && strings.EqualFold(e.key, key)
}

// readConfig reads and parses the config file at path; a missing file is
// an empty config.
func readConfig(path string) (*gitConfig, error) {
	data, err := readlimit.ReadFile(path, configLimit)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &gitConfig{}, nil
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	c, err := parseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// configParser reads a config file a character at a time, as git does:
// "\r\n" reads as "\n", and the end of the file as a final "\n".
type configParser struct {
	data []byte
	pos  int
	eof  bool
	line int
}

func (p *configParser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
		c = '\n'
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// The character classes of git's ctype.c (ASCII only; \v and \f are not
// white space there).
func isGitSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c byte) bool    { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isKeyChar(c byte) bool  { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// parseConfig parses a config file (git's git_parse_source).
func parseConfig(data []byte) (*gitConfig, error) {
	p := &configParser{data: data}
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		p.pos = 3 // a UTF-8 byte order mark
	}
	c := &gitConfig{}
	var section, subsection string
	hasSub, comment := false, false
	for {
		ch := p.next()
		if ch == '\n' {
			if p.eof {
				return c, nil
			}
			comment = false
			continue
		}
		if comment || isGitSpace(ch) {
			continue
		}
		if ch == '#' || ch == ';' {
			comment = true
			continue
		}
		if ch == '[' {
			base, err := p.sectionHeader()
			if err != nil {
				return nil, err
			}
			section, subsection, hasSub = strings.Cut(base, ".")
			continue
		}
		if !isAlpha(ch) {
			return nil, p.bad()
		}
		e, err := p.keyValue(ch)
		if err != nil {
			return nil, err
		}
		e.section, e.subsection, e.hasSub = section, subsection, hasSub
		c.entries = append(c.entries, e)
	}
}

// bad is the error git gives for a line it cannot read.
func (p *configParser) bad() error {
	line := p.line + 1
	if !p.eof && p.pos > 0 && p.data[p.pos-1] == '\n' {
		line = p.line // the newline that ended the bad line was counted
	}
	return fmt.Errorf("bad config line %d", line)
}

// sectionHeader reads what follows "[": "name]" (lowercased, dots kept:
// "a.B" is section a, subsection b) or `name "subsection"]` (the
// subsection as written, a backslash escaping the next character). It
// returns "section" or "section.subsection".
func (p *configParser) sectionHeader() (string, error) {
	var name []byte
	for {
		ch := p.next()
		if p.eof {
			return "", p.bad()
		}
		if ch == ']' {
			if len(name) == 0 {
				return "", p.bad()
			}
			return string(name), nil
		}
		if isGitSpace(ch) {
			return p.extendedHeader(name, ch)
		}
		if !isKeyChar(ch) && ch != '.' {
			return "", p.bad()
		}
		name = append(name, toLower(ch))
	}
}

func (p *configParser) extendedHeader(name []byte, ch byte) (string, error) {
	for {
		if ch == '\n' {
			return "", p.bad()
		}
		if ch = p.next(); !isGitSpace(ch) {
			break
		}
	}
	if ch != '"' {
		return "", p.bad()
	}
	name = append(name, '.')
	for {
		ch = p.next()
		if ch == '\n' {
			return "", p.bad()
		}
		if ch == '"' {
			break
		}
		if ch == '\\' {
			if ch = p.next(); ch == '\n' {
				return "", p.bad()
			}
		}
		name = append(name, ch)
	}
	if p.next() != ']' {
		return "", p.bad()
	}
	return string(name), nil
}

// keyValue reads a key whose first letter is first, and its value.
func (p *configParser) keyValue(first byte) (configEntry, error) {
	key := []byte{toLower(first)}
	var ch byte
	for {
		ch = p.next()
		if p.eof || !isKeyChar(ch) {
			break
		}
		key = append(key, toLower(ch))
	}
	for ch == ' ' || ch == '\t' {
		ch = p.next()
	}
	e := configEntry{key: string(key)}
	if ch == '\n' {
		e.noValue = true
		return e, nil
	}
	if ch != '=' {
		return e, p.bad()
	}
	v, err := p.value()
	if err != nil {
		return e, err
	}
	e.value = v
	return e, nil
}

// value reads a value up to the end of its line (git's parse_value):
// white space outside quotes is dropped at either end, and inside the
// value each white space character outside quotes reads as a space, as
// git up to 2.44 reads it (2.45 keeps a tab there as written; only such
// a tab reads differently).
func (p *configParser) value() (string, error) {
	var v []byte
	quote, comment := false, false
	spaces := 0 // white space outside quotes, written if more follows
	for {
		ch := p.next()
		if ch == '\n' {
			if quote {
				return "", p.bad()
			}
			return string(v), nil
		}
		if comment {
			continue
		}
		if isGitSpace(ch) && !quote {
			if len(v) > 0 {
				spaces++
			}
			continue
		}
		if !quote && (ch == ';' || ch == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			v = append(v, ' ')
		}
		if ch == '\\' {
			switch ch = p.next(); ch {
			case '\n':
				continue
			case 't':
				ch = '\t'
			case 'b':
				ch = '\b'
			case 'n':
				ch = '\n'
			case '\\', '"':
			default:
				return "", p.bad()
			}
			v = append(v, ch)
			continue
		}
		if ch == '"' {
			quote = !quote
			continue
		}
		v = append(v, ch)
	}
}

// OriginURL returns the first URL of the remote "origin" in the
// repository's own config (its url values, then its pushurl values, as
// go-git listed them), rewritten by url.<base>.insteadOf as git rewrites
// it; "" when there is none or the config does not parse.
func (r *Repo) OriginURL() string {
	cfg, err := readConfig(filepath.Join(r.commonDir, "config"))
	if err != nil {
		return ""
	}
	urls := append(cfg.getAll("remote", "origin", "url"), cfg.getAll("remote", "origin", "pushurl")...)
	if len(urls) == 0 {
		return ""
	}
	return cfg.insteadOf(urls[0])
}

// insteadOf rewrites url by the url.<base>.insteadOf value that is its
// longest prefix, as git's remote.c does: bases in the order they first
// appear, each with all its values; the first of equally long matches wins.
func (c *gitConfig) insteadOf(url string) string {
	var bases []string
	values := map[string][]string{}
	for _, e := range c.entries {
		if !e.hasSub || !e.is("url", e.subsection, "insteadof") {
			continue
		}
		if _, seen := values[e.subsection]; !seen {
			bases = append(bases, e.subsection)
		}
		values[e.subsection] = append(values[e.subsection], e.value)
	}
	match, base := -1, ""
	for _, b := range bases {
		for _, v := range values[b] {
			if strings.HasPrefix(url, v) && len(v) > match {
				match, base = len(v), b
			}
		}
	}
	if match < 0 {
		return url
	}
	return base + url[match:]
}

// Identity returns the user.name and user.email of the repository's
// config, each falling back to the global config, or empty strings. The
// global config is the first file that exists of
// $XDG_CONFIG_HOME/git/config (when XDG_CONFIG_HOME is set),
// ~/.gitconfig and ~/.config/git/config, the files go-git's
// ConfigScoped(GlobalScope) read, and in its order; like go-git, dome
// returns nothing when a config does not parse or the home folder is
// unknown. (This reads the process environment, as go-git did: dome's
// commands pass identities explicitly and use this as the fallback git
// users expect.)
func (r *Repo) Identity() (name, email string) {
	local, err := readConfig(filepath.Join(r.commonDir, "config"))
	if err != nil {
		return "", ""
	}
	global, err := readGlobalConfig()
	if err != nil {
		return "", ""
	}
	pick := func(key string) string {
		if v, _ := local.get("user", "", key); v != "" {
			return v
		}
		v, _ := global.get("user", "", key)
		return v
	}
	return pick("name"), pick("email")
}

func readGlobalConfig() (*gitConfig, error) {
	var files []string
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	files = append(files, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	for _, f := range files {
		data, err := readlimit.ReadFile(f, configLimit)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		c, err := parseConfig(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		return c, nil
	}
	return &gitConfig{}, nil
}
