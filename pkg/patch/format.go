package patch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// DiffCanonicalization names CanonicalDiff's form ("diff_canonicalization"
// of a PatchProposal). Version 1: the diff is parsed by Parse (git format,
// strip 1, exactly one patch) and written back by Format: no mail or commit
// header; file diffs in their order; for each, git's header lines in git's
// order ("diff --git", mode lines, similarity and rename/copy lines, "index"
// with the ids as written and the mode when it does not change), "---" and
// "+++" lines when there are hunks, hunk headers rebuilt from the parsed
// ranges (counts omitted when 1, as git does) with the section text trimmed,
// "\ No newline at end of file" markers, and binary patches as one forward
// "GIT binary patch" block re-encoded with zlib stored blocks (no
// compression, so the bytes depend on nothing but the data) in git's base85
// lines. Paths are C-quoted as git quotes them (control characters, '"',
// '\' and bytes above 0x7f).
const DiffCanonicalization = "dome.git_diff/v1"

// CanonicalDiff parses data (one git diff) and returns its canonical form
// (DiffCanonicalization) and the patch parsed from that form.
func CanonicalDiff(data []byte, source string) ([]byte, *Patch, error) {
	ps, err := Parse(data, ParseOptions{Source: source, Strip: DefaultStrip})
	if err != nil {
		return nil, nil, err
	}
	if len(ps) != 1 {
		return nil, nil, &errkind.InputError{Source: source, Problem: fmt.Sprintf("want one diff, found %d patches", len(ps)),
			Hint: "squash the series into one diff (git diff BASE..HEAD)"}
	}
	if len(ps[0].Files) == 0 {
		return nil, nil, &errkind.InputError{Source: source, Problem: "the diff changes nothing"}
	}
	for _, f := range ps[0].Files {
		if f.BinaryNoData {
			return nil, nil, &errkind.InputError{Source: source, Field: f.Path(), Problem: "binary file without data (\"Binary files ... differ\")",
				Hint: "make the diff with git diff --binary"}
		}
	}
	out := Format(ps[0])
	cp, err := Parse(out, ParseOptions{Source: source + " (canonical)", Strip: DefaultStrip})
	if err != nil || len(cp) != 1 {
		return nil, nil, fmt.Errorf("%s: the canonical form does not parse back: %v", source, err)
	}
	return out, cp[0], nil
}

// Format writes p's file diffs in git's format (without p's header), so that
// Parse reads back the same patch and git apply applies it.
func Format(p *Patch) []byte {
	var b bytes.Buffer
	for _, f := range p.Files {
		formatFile(&b, f)
	}
	return b.Bytes()
}

func formatFile(b *bytes.Buffer, f *File) {
	oldName, newName := f.OldPath, f.NewPath
	if f.IsNew {
		oldName = f.NewPath
	}
	if f.IsDelete {
		newName = f.OldPath
	}
	fmt.Fprintf(b, "diff --git %s %s\n", quotePath("a/"+oldName), quotePath("b/"+newName))
	switch {
	case f.IsNew:
		fmt.Fprintf(b, "new file mode %s\n", modeOr(f.NewMode, ModeFile))
	case f.IsDelete:
		fmt.Fprintf(b, "deleted file mode %s\n", modeOr(f.OldMode, ModeFile))
	case f.OldMode != 0 && f.NewMode != 0 && f.OldMode != f.NewMode:
		fmt.Fprintf(b, "old mode %s\nnew mode %s\n", f.OldMode, f.NewMode)
	}
	switch {
	case f.IsRename:
		if f.Similarity >= 0 {
			fmt.Fprintf(b, "similarity index %d%%\n", f.Similarity)
		}
		fmt.Fprintf(b, "rename from %s\nrename to %s\n", quotePath(f.OldPath), quotePath(f.NewPath))
	case f.IsCopy:
		if f.Similarity >= 0 {
			fmt.Fprintf(b, "similarity index %d%%\n", f.Similarity)
		}
		fmt.Fprintf(b, "copy from %s\ncopy to %s\n", quotePath(f.OldPath), quotePath(f.NewPath))
	}
	if f.OldOID != "" || f.NewOID != "" {
		fmt.Fprintf(b, "index %s..%s", f.OldOID, f.NewOID)
		if !f.IsNew && !f.IsDelete && f.OldMode != 0 && f.OldMode == f.NewMode {
			fmt.Fprintf(b, " %s", f.NewMode)
		}
		b.WriteByte('\n')
	}
	if f.Binary != nil {
		b.WriteString("GIT binary patch\n")
		kind := "literal"
		if f.Binary.Kind == BinaryDelta {
			kind = "delta"
		}
		fmt.Fprintf(b, "%s %d\n", kind, len(f.Binary.Data))
		writeBase85(b, storedZlib(f.Binary.Data))
		b.WriteByte('\n')
		return
	}
	if len(f.Hunks) == 0 {
		return
	}
	minus, plus := "/dev/null", "/dev/null"
	if !f.IsNew {
		minus = "a/" + f.OldPath
	}
	if !f.IsDelete {
		plus = "b/" + f.NewPath
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", nameTab(minus), nameTab(plus))
	for _, h := range f.Hunks {
		fmt.Fprintf(b, "@@ -%s +%s @@", hunkRange(h.OldStart, h.OldLines), hunkRange(h.NewStart, h.NewLines))
		if h.Section != "" {
			b.WriteString(" " + h.Section)
		}
		b.WriteByte('\n')
		for _, l := range h.Lines {
			b.WriteByte(l.Op)
			b.WriteString(l.Text)
			if !strings.HasSuffix(l.Text, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
}

func modeOr(m, def Mode) Mode {
	if m == 0 {
		return def
	}
	return m
}

func hunkRange(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

// nameTab quotes a ---/+++ name; git ends a name holding a space with a tab.
func nameTab(s string) string {
	q := quotePath(s)
	if q == s && strings.ContainsRune(s, ' ') {
		return s + "\t"
	}
	return q
}

// quotePath C-quotes a path as git does with core.quotePath (the default).
func quotePath(s string) string {
	need := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			need = true
			break
		}
	}
	if !need {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// storedZlib returns a zlib stream (RFC 1950) of data in stored (not
// compressed) deflate blocks: the same bytes whatever the library version.
func storedZlib(data []byte) []byte {
	var b bytes.Buffer
	orig := data
	b.Write([]byte{0x78, 0x01})
	const max = 65535
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), max)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		b.WriteByte(final)
		var hdr [4]byte
		binary.LittleEndian.PutUint16(hdr[0:], uint16(n))
		binary.LittleEndian.PutUint16(hdr[2:], ^uint16(n))
		b.Write(hdr[:])
		b.Write(data[:n])
		data = data[n:]
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum(orig))
	b.Write(sum[:])
	return b.Bytes()
}

// writeBase85 writes data in git's base85 lines: up to 52 bytes a line, the
// line's length as a letter (A-Z 1-26, a-z 27-52), 5 characters per 4 bytes.
func writeBase85(b *bytes.Buffer, data []byte) {
	for len(data) > 0 {
		n := min(len(data), 52)
		if n <= 26 {
			b.WriteByte(byte('A' + n - 1))
		} else {
			b.WriteByte(byte('a' + n - 27))
		}
		line := data[:n]
		for i := 0; i < n; i += 4 {
			var acc uint32
			for j := 0; j < 4; j++ {
				acc <<= 8
				if i+j < n {
					acc |= uint32(line[i+j])
				}
			}
			var enc [5]byte
			for k := 4; k >= 0; k-- {
				enc[k] = b85chars[acc%85]
				acc /= 85
			}
			b.Write(enc[:])
		}
		b.WriteByte('\n')
		data = data[n:]
	}
}
