// Package patchsim is a deterministic random-edit simulator: it writes a
// linear history of commits as a `git fast-import` stream, with line
// inserts, deletes and block moves, renames and copies with edits, mode
// changes, CRLF files, files without a final newline, binary files (small
// edits and rewrites), empty files, symlinks inside the tree, file/directory
// swaps and paths that git quotes. The patch engine's conformance test and
// bench/patch feed it to the real git and compare.
package patchsim

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"sort"
	"strconv"
	"strings"
)

type file struct {
	mode   string // "100644", "100755", "120000"
	data   []byte
	target string // a symlink's target, relative to the root
}

// Sim holds the simulated tree.
type Sim struct {
	rng   *rand.Rand
	msgs  *rand.Rand // commit messages and authors: their own stream, so trees do not depend on them
	files map[string]*file
	n     int // counter for fresh names
}

var words = strings.Fields(`alpha beta gamma delta return if else for range func var const type struct
map string int err nil true false x y z open close read write } { ( ) // TODO fix loop index value key`)

var dirs = []string{"", "src", "src/util", "docs", "lib/deep/er", "with space", "ünï", "data"}

// Generate writes a fast-import stream of commits commits on refs/heads/main
// to w, deterministic for seed. Commit times start at 2026-01-01 and step one
// minute.
func Generate(w io.Writer, seed uint64, commits int) error {
	s := &Sim{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), msgs: rand.New(rand.NewPCG(seed^0x5bd1e995, seed)), files: map[string]*file{}}
	for c := 1; c <= commits; c++ {
		changed := map[string]bool{}
		if c == 1 {
			for i := 0; i < 12; i++ {
				s.addFile(changed)
			}
		} else {
			ops := 1 + s.rng.IntN(4)
			for i := 0; i < ops || len(changed) == 0; i++ {
				s.step(changed)
			}
		}
		if err := s.emit(w, c, changed); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sim) emit(w io.Writer, c int, changed map[string]bool) error {
	var b bytes.Buffer
	ts := 1767225600 + int64(c)*60
	msg, author, tz := s.message(c, len(changed))
	fmt.Fprintf(&b, "commit refs/heads/main\nmark :%d\nauthor %s %d %s\ncommitter Sim <sim@dome.invalid> %d +0000\ndata %d\n%s", c, author, ts, tz, ts, len(msg), msg)
	if c > 1 {
		fmt.Fprintf(&b, "from :%d\n", c-1)
	}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	// deletions first, so a file can become a directory in one commit
	for _, p := range paths {
		if s.files[p] == nil {
			fmt.Fprintf(&b, "D %s\n", quote(p))
		}
	}
	for _, p := range paths {
		if f := s.files[p]; f != nil {
			fmt.Fprintf(&b, "M %s inline %s\ndata %d\n", f.mode, quote(p), len(f.data))
			b.Write(f.data)
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

func quote(p string) string { return strconv.Quote(p) }

// messages are commit message shapes git format-patch and git am treat
// specially: leading spaces in the body, bracketed and "Re:" subject
// prefixes, subjects long enough to fold, non-ASCII (RFC 2047), trailing
// white space and runs of blank lines, a "---" or "diff -" line that ends
// the message for git am, in-body "From:" lines, a two-line first paragraph.
var messages = []string{
	"sim commit %[1]d\n\nchanged %[2]d paths\n",
	"sim commit %[1]d\n\n  indented body: %[2]d paths\n    deeper\n",
	"[area] sim commit %[1]d\n\nbody\n",
	"Re: [PATCH] sim commit %[1]d\n",
	"sim commit %[1]d with a subject long enough that git format-patch folds the Subject header over lines\n\nbody\n",
	"sim commit %[1]d: caf\u00e9, na\u00efve, \u65e5\u672c\n\nZo\u00eb's body \u2014 %[2]d\n",
	"sim commit %[1]d   \n\n\n\nbody with trailing space   \n\t\n\n\nafter blank lines\t\n\n\n",
	"sim commit %[1]d\n\nabove the line\n---\nbelow the line (git am drops it)\n",
	"sim commit %[1]d\n\nmentions\ndiff -u a b\nand more\n",
	"sim commit %[1]d\n\nFrom: Someone Else <else@dome.invalid>\n\nthe body\n",
	"sim commit %[1]d\nsecond line of the first paragraph\n\nbody\n",
	"sim commit %[1]d\n",
	":sim commit %[1]d =?utf-8?q?not-encoded?=\n\n\tbody starts with a tab\n",
	"[v2 3/4] [PATCH] sim commit %[1]d\n\n>From the archive\n",
}

var authors = []string{
	"Sim <sim@dome.invalid>", "Ann Example Jr. <ann@dome.invalid>", "Doe, John <jd@dome.invalid>",
	"Zo\u00eb \u00c6lfric <zoe@dome.invalid>", "J. R. \"Bob\" Dobbs <bob@dome.invalid>", "x <x@dome.invalid>",
	"Name (nick) Surname <ns@dome.invalid>", "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9 <long@dome.invalid>",
}

var zones = []string{"+0000", "+0530", "-0800", "+1300", "-0000"}

// message picks commit c's message, author and time zone.
func (s *Sim) message(c, changed int) (string, string, string) {
	if c == 1 {
		return fmt.Sprintf(messages[0], c, changed), authors[0], zones[0]
	}
	m := messages[s.msgs.IntN(len(messages))]
	return fmt.Sprintf(m, c, changed), authors[s.msgs.IntN(len(authors))], zones[s.msgs.IntN(len(zones))]
}

func (s *Sim) pick(pred func(string, *file) bool) string {
	var ps []string
	for p, f := range s.files {
		if pred(p, f) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return ""
	}
	sort.Strings(ps)
	return ps[s.rng.IntN(len(ps))]
}

func isText(_ string, f *file) bool {
	return f.mode != "120000" && !bytes.ContainsRune(f.data, 0)
}

func (s *Sim) step(changed map[string]bool) {
	switch r := s.rng.IntN(100); {
	case r < 40:
		s.editText(changed)
	case r < 48:
		s.moveBlock(changed)
	case r < 58:
		s.addFile(changed)
	case r < 63:
		s.deleteFile(changed)
	case r < 71:
		s.rename(changed)
	case r < 75:
		s.copyFile(changed)
	case r < 81:
		s.chmod(changed)
	case r < 88:
		s.editBinary(changed)
	case r < 93:
		s.toggleEOL(changed)
	case r < 96:
		s.symlink(changed)
	default:
		s.swapDir(changed)
	}
}

func (s *Sim) freshPath(ext string) string {
	for {
		s.n++
		d := dirs[s.rng.IntN(len(dirs))]
		name := fmt.Sprintf("f%d%s", s.n, ext)
		switch s.rng.IntN(12) {
		case 0:
			name = fmt.Sprintf("name with space %d%s", s.n, ext)
		case 1:
			name = fmt.Sprintf("back\\slash%d%s", s.n, ext)
		case 2:
			name = fmt.Sprintf("quo\"te%d%s", s.n, ext)
		}
		p := path.Join(d, name)
		if s.free(p) {
			return p
		}
	}
}

// free reports whether p can be created: no file at p, at a parent, or below.
func (s *Sim) free(p string) bool {
	for q := range s.files {
		if q == p || strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") {
			return false
		}
	}
	return true
}

func (s *Sim) line() string {
	n := 1 + s.rng.IntN(6)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[s.rng.IntN(len(words))]
	}
	indent := strings.Repeat("\t", s.rng.IntN(3))
	return indent + strings.Join(ws, " ")
}

func (s *Sim) textBody(lines int, crlf, eol bool) []byte {
	var b bytes.Buffer
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	for i := 0; i < lines; i++ {
		b.WriteString(s.line())
		if i < lines-1 || eol {
			b.WriteString(nl)
		}
	}
	return b.Bytes()
}

func (s *Sim) binaryBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(s.rng.IntN(256))
	}
	b[0] = 0 // git sees a NUL as binary
	return b
}

func (s *Sim) addFile(changed map[string]bool) {
	var f file
	ext := ".txt"
	switch r := s.rng.IntN(20); {
	case r < 12:
		f = file{mode: "100644", data: s.textBody(5+s.rng.IntN(80), false, true)}
	case r < 14:
		f = file{mode: "100644", data: s.textBody(3+s.rng.IntN(30), true, true)}
	case r < 16:
		f = file{mode: "100644", data: s.textBody(1+s.rng.IntN(20), false, false)}
	case r < 17:
		f = file{mode: "100644", data: nil}
	case r < 19:
		ext = ".bin"
		f = file{mode: "100644", data: s.binaryBody(16 + s.rng.IntN(3000))}
	default:
		ext = ".sh"
		f = file{mode: "100755", data: append([]byte("#!/bin/sh\n"), s.textBody(2+s.rng.IntN(10), false, true)...)}
	}
	p := s.freshPath(ext)
	s.files[p] = &f
	changed[p] = true
}

func splitKeep(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

func (s *Sim) editText(changed map[string]bool) {
	p := s.pick(isText)
	if p == "" {
		s.addFile(changed)
		return
	}
	f := s.files[p]
	lines := splitKeep(f.data)
	crlf := bytes.Contains(f.data, []byte("\r\n"))
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	edits := 1 + s.rng.IntN(5)
	for e := 0; e < edits; e++ {
		at := 0
		if len(lines) > 0 {
			at = s.rng.IntN(len(lines) + 1)
		}
		switch s.rng.IntN(3) {
		case 0: // insert
			var ins []string
			for k := 0; k < 1+s.rng.IntN(4); k++ {
				ins = append(ins, s.line()+nl)
			}
			if at == len(lines) && at > 0 && !strings.HasSuffix(lines[at-1], "\n") {
				lines[at-1] += nl // keep the file's last line intact when appending
			}
			lines = append(lines[:at], append(ins, lines[at:]...)...)
		case 1: // delete
			if at < len(lines) {
				end := min(len(lines), at+1+s.rng.IntN(3))
				lines = append(lines[:at], lines[end:]...)
			}
		default: // modify
			if at < len(lines) {
				end := ""
				if strings.HasSuffix(lines[at], "\n") {
					end = nl
				}
				lines[at] = s.line() + end
			}
		}
	}
	f.data = []byte(strings.Join(lines, ""))
	changed[p] = true
}

func (s *Sim) moveBlock(changed map[string]bool) {
	p := s.pick(func(p string, f *file) bool { return isText(p, f) && bytes.Count(f.data, []byte("\n")) > 8 })
	if p == "" {
		s.editText(changed)
		return
	}
	f := s.files[p]
	lines := splitKeep(f.data)
	last := len(lines) - 1 // keep the last line (it may lack a newline) in place
	at := s.rng.IntN(last - 1)
	n := 1 + s.rng.IntN(min(6, last-at))
	block := append([]string(nil), lines[at:at+n]...)
	rest := append(append([]string(nil), lines[:at]...), lines[at+n:]...)
	to := s.rng.IntN(len(rest)) // before the last line
	rest = append(rest[:to], append(block, rest[to:]...)...)
	f.data = []byte(strings.Join(rest, ""))
	changed[p] = true
}

func (s *Sim) deleteFile(changed map[string]bool) {
	if len(s.files) < 6 {
		return
	}
	p := s.pick(func(string, *file) bool { return true })
	delete(s.files, p)
	changed[p] = true
}

func (s *Sim) rename(changed map[string]bool) {
	p := s.pick(func(p string, f *file) bool { return !changed[p] })
	if p == "" {
		return
	}
	f := s.files[p]
	np := s.freshPath(path.Ext(p))
	delete(s.files, p)
	changed[p] = true
	s.files[np] = f
	changed[np] = true
	if f.mode == "120000" {
		f.data = []byte(relTo(path.Dir(np), f.target))
	}
	if isText(np, f) && len(f.data) > 40 && s.rng.IntN(2) == 0 {
		lines := splitKeep(f.data)
		i := s.rng.IntN(len(lines))
		end := ""
		if strings.HasSuffix(lines[i], "\n") {
			end = "\n"
			if strings.HasSuffix(lines[i], "\r\n") {
				end = "\r\n"
			}
		}
		lines[i] = s.line() + end
		f.data = []byte(strings.Join(lines, ""))
	}
}

func (s *Sim) copyFile(changed map[string]bool) {
	p := s.pick(func(p string, f *file) bool { return isText(p, f) && len(f.data) > 40 })
	if p == "" {
		return
	}
	f := s.files[p]
	np := s.freshPath(path.Ext(p))
	data := append([]byte(nil), f.data...)
	if s.rng.IntN(2) == 0 {
		data = append([]byte(s.line()+"\n"), data...)
	}
	s.files[np] = &file{mode: f.mode, data: data}
	changed[np] = true
	if s.rng.IntN(2) == 0 { // modify the source too, so that plain -C finds the copy
		f.data = append(f.data, []byte{}...)
		s.editTextAt(p, changed)
	}
}

func (s *Sim) editTextAt(p string, changed map[string]bool) {
	f := s.files[p]
	lines := splitKeep(f.data)
	if len(lines) == 0 {
		return
	}
	i := s.rng.IntN(len(lines))
	end := ""
	if strings.HasSuffix(lines[i], "\n") {
		end = "\n"
	}
	lines[i] = s.line() + end
	f.data = []byte(strings.Join(lines, ""))
	changed[p] = true
}

func (s *Sim) chmod(changed map[string]bool) {
	p := s.pick(func(_ string, f *file) bool { return f.mode != "120000" })
	if p == "" {
		return
	}
	f := s.files[p]
	if f.mode == "100644" {
		f.mode = "100755"
	} else {
		f.mode = "100644"
	}
	changed[p] = true
	if s.rng.IntN(3) == 0 && isText(p, f) {
		s.editTextAt(p, changed)
	}
}

func (s *Sim) editBinary(changed map[string]bool) {
	p := s.pick(func(_ string, f *file) bool { return f.mode != "120000" && bytes.ContainsRune(f.data, 0) })
	if p == "" {
		p = s.freshPath(".bin")
		s.files[p] = &file{mode: "100644", data: s.binaryBody(100 + s.rng.IntN(4000))}
		changed[p] = true
		return
	}
	f := s.files[p]
	if s.rng.IntN(3) == 0 {
		f.data = s.binaryBody(16 + s.rng.IntN(5000)) // rewrite: a literal
	} else {
		d := append([]byte(nil), f.data...)
		for k := 0; k < 1+s.rng.IntN(4); k++ { // small edits: a delta
			i := s.rng.IntN(len(d))
			d[i] ^= byte(1 + s.rng.IntN(255))
		}
		if s.rng.IntN(2) == 0 {
			d = append(d, s.binaryBody(1+s.rng.IntN(200))...)
		}
		f.data = d
	}
	changed[p] = true
}

func (s *Sim) toggleEOL(changed map[string]bool) {
	p := s.pick(func(p string, f *file) bool { return isText(p, f) && len(f.data) > 0 })
	if p == "" {
		return
	}
	f := s.files[p]
	switch {
	case bytes.HasSuffix(f.data, []byte("\r\n")):
		f.data = f.data[:len(f.data)-2]
	case bytes.HasSuffix(f.data, []byte("\n")):
		f.data = f.data[:len(f.data)-1]
	default:
		f.data = append(f.data, '\n')
	}
	changed[p] = true
}

func (s *Sim) symlink(changed map[string]bool) {
	if p := s.pick(func(_ string, f *file) bool { return f.mode == "120000" }); p != "" && s.rng.IntN(2) == 0 {
		t := s.pick(func(_ string, f *file) bool { return f.mode != "120000" })
		if t != "" {
			s.files[p].data = []byte(relTo(path.Dir(p), t))
			s.files[p].target = t
			changed[p] = true
		}
		return
	}
	t := s.pick(func(_ string, f *file) bool { return f.mode != "120000" })
	if t == "" {
		return
	}
	p := s.freshPath(".link")
	s.files[p] = &file{mode: "120000", data: []byte(relTo(path.Dir(p), t)), target: t}
	changed[p] = true
}

// relTo returns target relative to dir (both relative to the root).
func relTo(dir, target string) string {
	if dir == "." {
		return target
	}
	up := strings.Repeat("../", strings.Count(dir, "/")+1)
	return up + target
}

// swapDir replaces a file by a directory of the same name, or the other way.
func (s *Sim) swapDir(changed map[string]bool) {
	p := s.pick(func(p string, _ *file) bool { return !changed[p] })
	if p == "" {
		return
	}
	f := s.files[p]
	delete(s.files, p)
	changed[p] = true
	inner := p + "/inner.txt"
	f.mode = "100644"
	s.files[inner] = f
	changed[inner] = true
}
