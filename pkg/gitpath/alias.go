package gitpath

// The spellings Windows and macOS file systems resolve to a dot-name, as
// git's path.c (is_ntfs_dotgit, is_ntfs_dot_generic) and utf8.c
// (is_hfs_dot_generic) test them. Each reads from the start of a path
// component to the end of the whole path, as git's do; a byte past the end
// reads as 0, the C string's terminator.

func byteAt(s string, i int) byte {
	if i >= 0 && i < len(s) {
		return s[i]
	}
	return 0
}

// isNTFSDotGit: ".git" or "git~1" (any case) followed by nothing but dots
// and spaces up to the end, a "/" or "\" separator, or a ":" stream name.
func isNTFSDotGit(s string) bool {
	i := 0
	switch c := byteAt(s, 0); {
	case c == '.':
		if lower(byteAt(s, 1)) != 'g' || lower(byteAt(s, 2)) != 'i' || lower(byteAt(s, 3)) != 't' {
			return false
		}
		i = 4
	case c == 'g' || c == 'G':
		if lower(byteAt(s, 1)) != 'i' || lower(byteAt(s, 2)) != 't' || byteAt(s, 3) != '~' || byteAt(s, 4) != '1' {
			return false
		}
		i = 5
	default:
		return false
	}
	for ; ; i++ {
		c := byteAt(s, i)
		if c == 0 || c == '/' || c == '\\' || c == ':' {
			return true
		}
		if c != '.' && c != ' ' {
			return false
		}
	}
}

// isNTFSDot: "." + name (any case), name's 6-letter short form + "~1".."~4",
// or the fall-back 8.3 name built from short (e.g. "gi7eba~1"), followed by
// nothing but dots and spaces up to the end or a ":" stream name.
func isNTFSDot(s, name, short string) bool {
	onlySpacesAndPeriods := func(i int) bool {
		for ; ; i++ {
			c := byteAt(s, i)
			if c == 0 || c == ':' {
				return true
			}
			if c != ' ' && c != '.' {
				return false
			}
		}
	}
	if byteAt(s, 0) == '.' && len(s) >= 1+len(name) && asciiEqualFold(s[1:1+len(name)], name) {
		return onlySpacesAndPeriods(len(name) + 1)
	}
	if len(s) >= 8 && asciiEqualFold(s[:6], name[:6]) && s[6] == '~' && s[7] >= '1' && s[7] <= '4' {
		return onlySpacesAndPeriods(8)
	}
	sawTilde := false
	i := 0
	for ; i < 8; i++ {
		c := byteAt(s, i)
		switch {
		case c == 0:
			return false
		case sawTilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if d := byteAt(s, i); d < '1' || d > '9' {
				return false
			}
			sawTilde = true
		case i >= 6:
			return false
		case c&0x80 != 0:
			return false
		case lower(c) != short[i]:
			return false
		}
	}
	return onlySpacesAndPeriods(i)
}

// isHFSDot: "." + name with the code points HFS+ ignores anywhere in it
// (name compares in ASCII case), followed by the end or a "/". Invalid
// UTF-8 reads as the end, as in git.
func isHFSDot(s, name string) bool {
	pos := 0
	if nextHFS(s, &pos) != '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := nextHFS(s, &pos)
		if c > 127 || rune(lower(byte(c))) != rune(name[i]) {
			return false
		}
	}
	c := nextHFS(s, &pos)
	return c == 0 || c == '/'
}

// nextHFS returns the next code point of s at *pos that HFS+ does not
// ignore; 0 at the end or at invalid UTF-8 (and then stays at 0).
func nextHFS(s string, pos *int) rune {
	for {
		if *pos < 0 {
			return 0
		}
		r, n := pickUTF8(s[*pos:])
		if n == 0 {
			*pos = -1
			return 0
		}
		*pos += n
		switch r {
		case 0x200c, 0x200d, 0x200e, 0x200f, // zero-width non-joiner, joiner; LTR and RTL marks
			0x202a, 0x202b, 0x202c, 0x202d, 0x202e, // embeddings and overrides
			0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, // deprecated format characters
			0xfeff: // zero-width no-break space
			continue
		}
		if r == 0 {
			*pos = -1 // the end: stay there
		}
		return r
	}
}

// pickUTF8 decodes one character as git's pick_one_utf8_char does: the end
// of s reads as U+0000 (one byte); n == 0 for invalid UTF-8, which here
// also means overlong forms, surrogates, U+FFFE, U+FFFF and values past
// U+10FFFF.
func pickUTF8(s string) (r rune, n int) {
	if s == "" {
		return 0, 1
	}
	c0 := s[0]
	b := func(i int) byte { return byteAt(s, i) }
	switch {
	case c0 < 0x80:
		return rune(c0), 1
	case c0&0xe0 == 0xc0:
		if b(1)&0xc0 != 0x80 || c0&0xfe == 0xc0 {
			return 0, 0
		}
		return rune(c0&0x1f)<<6 | rune(b(1)&0x3f), 2
	case c0&0xf0 == 0xe0:
		if b(1)&0xc0 != 0x80 || b(2)&0xc0 != 0x80 ||
			c0 == 0xe0 && b(1)&0xe0 == 0x80 || // overlong
			c0 == 0xed && b(1)&0xe0 == 0xa0 || // surrogate
			c0 == 0xef && b(1) == 0xbf && b(2)&0xfe == 0xbe { // U+FFFE, U+FFFF
			return 0, 0
		}
		return rune(c0&0x0f)<<12 | rune(b(1)&0x3f)<<6 | rune(b(2)&0x3f), 3
	case c0&0xf8 == 0xf0:
		if b(1)&0xc0 != 0x80 || b(2)&0xc0 != 0x80 || b(3)&0xc0 != 0x80 ||
			c0 == 0xf0 && b(1)&0xf0 == 0x80 || // overlong
			c0 == 0xf4 && b(1) > 0x8f || c0 > 0xf4 { // past U+10FFFF
			return 0, 0
		}
		return rune(c0&0x07)<<18 | rune(b(1)&0x3f)<<12 | rune(b(2)&0x3f)<<6 | rune(b(3)&0x3f), 4
	}
	return 0, 0
}
