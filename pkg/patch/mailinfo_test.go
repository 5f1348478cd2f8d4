package patch

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/errkind"
)

const mailDiff = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"

// mails are format-patch messages (headers, blank line, body) with the
// shapes git am's mailinfo treats specially.
var mails = []struct{ name, head, body string }{
	{"plain", "From: A U Thor <a@example.com>\nDate: Fri, 2 Jan 2026 03:04:05 +0000\nSubject: [PATCH] fix it\n", "body\n---\n"},
	{"body starts with a space", "From: A <a@example.com>\nDate: Fri, 2 Jan 2026 03:04:05 +0530\nSubject: [PATCH 1/3] lead\n", "  indented\n   more\n---\n"},
	{"body starts with a tab", "From: A <a@example.com>\nSubject: [PATCH] tab\n", "\tcode\n---\n"},
	{"blank lines and trailing space", "From: A <a@example.com>\nSubject: [PATCH] s   \n", "\n\n\nline   \n\n\n\nline2\t\n\n\n---\n"},
	{"folded subject", "From: A <a@example.com>\nSubject: [PATCH v2] a subject long enough that it\n folds over\n\ttwo lines\n", "---\n"},
	{"prefixes", "From: A <a@example.com>\nSubject: Re: [RFC] [PATCH 2/2]: re: fix\n", "---\n"},
	{"bracket kept inside", "From: A <a@example.com>\nSubject: [PATCH] fix [tag] inside\n", "---\n"},
	{"RFC 2047 subject", "From: A <a@example.com>\nSubject: [PATCH] =?UTF-8?q?caf=C3=A9=20na=C3=AFve?=\n =?UTF-8?q?_and_more?=\n", "---\n"},
	{"RFC 2047 base64 name", "From: =?UTF-8?B?Wm/Dqw==?= <z@example.com>\nSubject: [PATCH] x\n", "---\n"},
	{"Latin-1 word", "From: A <a@example.com>\nSubject: [PATCH] =?ISO-8859-1?Q?Fran=E7ois?=\n", "---\n"},
	{"quoted name", "From: \"Doe, John\" <jd@example.com>\nSubject: [PATCH] q\n", "---\n"},
	{"escaped quote", "From: \"J. R. \\\"Bob\\\" Dobbs\" <bob@example.com>\nSubject: [PATCH] q\n", "---\n"},
	{"comment name", "From: jd@example.com (John Doe)\nSubject: [PATCH] c\n", "---\n"},
	{"address only", "From: jd@example.com\nSubject: [PATCH] c\n", "---\n"},
	{"long name", "From: " + strings.Repeat("Verylongname ", 6) + "<l@example.com>\nSubject: [PATCH] c\n", "---\n"},
	{"crud name", "From: Ann Example Jr. <ann@example.com>\nSubject: [PATCH] c\n", "---\n"},
	{"no at", "From: Nobody <nobody>\nSubject: [PATCH] c\n", "---\n"},
	{"in-body From", "From: Sender <s@example.com>\nSubject: [PATCH] x\n", "From: Real Author <r@example.com>\nDate: Mon, 5 Jan 2026 10:00:00 -0800\n\nbody\n---\n"},
	{"in-body Subject", "From: A <a@example.com>\nSubject: [PATCH] mail subject\n", "Subject: the real subject\n  continued\n\nbody\n---\n"},
	{"in-body [PATCH]", "From: A <a@example.com>\nSubject: [PATCH] mail\n", "[PATCH] from the body\n\nbody\n---\n"},
	{"From: later in the body", "From: A <a@example.com>\nSubject: [PATCH] x\n", "body\nFrom: not a header\n---\n"},
	{"dash lines", "From: A <a@example.com>\nSubject: [PATCH] x\n", "kept\n----\nkept too\n--- \ngone\n---\n"},
	{"diff - ends", "From: A <a@example.com>\nSubject: [PATCH] x\n", "before\ndiff -u is mentioned\nafter\n---\n"},
	{"Index: ends", "From: A <a@example.com>\nSubject: [PATCH] x\n", "before\nIndex: here\n---\n"},
	{"--- name ends", "From: A <a@example.com>\nSubject: [PATCH] x\n", "before\n--- a/x\n"},
	{">From separator", "From: A <a@example.com>\nSubject: [PATCH] x\n", ">From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\nbody\n---\n"},
	{">From text", "From: A <a@example.com>\nSubject: [PATCH] x\n", ">From the archive\n---\n"},
	{"no subject", "From: A <a@example.com>\n", "only a body\n---\n"},
	{"charset", "From: A <a@example.com>\nSubject: [PATCH] x\nContent-Type: text/plain; charset=ISO-8859-1\n", "Fran\xe7ois\n---\n"},
	{"crlf", "From: A <a@example.com>\r\nSubject: [PATCH] crlf\r\n", "\r\n  body\r\n---\r\n"},
}

// TestMailinfoMatchesGit: author, address, date and the commit message git
// am would write, against `git mailinfo` (what git am runs).
func TestMailinfoMatchesGit(t *testing.T) {
	gittest.Need(t)
	dir := t.TempDir()
	for _, c := range mails {
		t.Run(c.name, func(t *testing.T) {
			mail := "From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n" + c.head + "\n" + c.body + mailDiff
			if _, ok := gitMailinfo(t, dir, []byte(mail)); !ok {
				t.Fatal("git mailinfo refuses the table's mail")
			}
			compareMailinfo(t, dir, []byte(mail))
		})
	}
}

func compareMailinfo(t *testing.T, dir string, mail []byte) {
	t.Helper()
	want, ok := gitMailinfo(t, dir, mail)
	ps, err := Parse(mail, ParseOptions{Strip: 1})
	if !ok {
		if err == nil {
			t.Fatalf("git mailinfo refuses the mail, dome reads it")
		}
		return
	}
	if err != nil {
		t.Fatalf("dome: %v", err)
	}
	h := ps[0].Header
	got := mailInfo{author: h.Author, email: h.Email, date: h.Date, message: h.Message()}
	if got != want {
		t.Fatalf("dome %+v\ngit  %+v", got, want)
	}
}

type mailInfo struct{ author, email, date, message string }

// gitMailinfo runs `git mailinfo` and returns what git am takes from it
// (ok false when it fails).
func gitMailinfo(t *testing.T, dir string, mail []byte) (mailInfo, bool) {
	t.Helper()
	cmd := exec.Command("git", "mailinfo", filepath.Join(dir, "msg"), filepath.Join(dir, "patch"))
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Env(), bytes.NewReader(mail)
	out, err := cmd.Output()
	if err != nil {
		return mailInfo{}, false
	}
	var mi mailInfo
	var subject []string
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "Author: "):
			mi.author = l[len("Author: "):]
		case strings.HasPrefix(l, "Email: "):
			mi.email = l[len("Email: "):]
		case strings.HasPrefix(l, "Date: "):
			mi.date = l[len("Date: "):]
		case strings.HasPrefix(l, "Subject: "):
			subject = append(subject, l[len("Subject: "):])
		}
	}
	msg, _ := os.ReadFile(filepath.Join(dir, "msg"))
	mi.message = stripSpace(strings.Join(subject, "\n") + "\n\n" + string(msg))
	return mi, true
}

// unterminatedQuote reports whether a line holds a "quoted string" or a
// (comment) that does not end on it (git's unquote_quoted_pair then reads
// beyond the header).
func unterminatedQuote(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		depth, quoted, literal := 0, false, false
		for i := 0; i < len(l); i++ {
			c := l[i]
			switch {
			case literal:
				literal = false
			case c == '\\' && (quoted || depth > 0):
				literal = true
			case quoted:
				quoted = c != '"'
			case c == '"' && depth == 0:
				quoted = true
			case c == '(':
				depth++
			case c == ')' && depth > 0:
				depth--
			}
		}
		if quoted || depth > 0 {
			return true
		}
	}
	return false
}

func TestStripSpace(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"\n\n":                   "",
		"a":                      "a\n",
		"\n\n a  \n\n\n b\t\n\n": " a\n\n b\n",
		"s\n\n  lead\n":          "s\n\n  lead\n",
	} {
		if got := stripSpace(in); got != want {
			t.Errorf("stripSpace(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzMailinfo compares the mail reading with `git mailinfo` on mails the
// fuzzer derives (one git process per input; skipped without git).
func FuzzMailinfo(f *testing.F) {
	for _, c := range mails {
		f.Add(c.head, c.body)
	}
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("git binary not found")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, head, body string) {
		if len(head)+len(body) > 2000 || strings.ContainsAny(head+body, "\x00") || strings.Contains(head+body, "\nFrom ") ||
			strings.Contains(head, "\n\n") || !strings.HasSuffix(body, "---\n") || strings.Contains(head+body, "diff --git") {
			return
		}
		mail := "From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n" + head + "\n" + body + mailDiff
		want, ok := gitMailinfo(t, dir, []byte(mail))
		ps, err := Parse([]byte(mail), ParseOptions{Strip: 1})
		if !ok || err != nil || len(ps) != 1 {
			return // refusals may differ: dome refuses what it does not read (multipart, encodings)
		}
		if unterminatedQuote(head + body) {
			return // git reads past the end of an unterminated "quoted string" or (comment) in From
		}
		h := ps[0].Header
		if got := (mailInfo{author: h.Author, email: h.Email, date: h.Date, message: h.Message()}); got != want {
			t.Fatalf("mail %q\ndome %+v\ngit  %+v", mail, got, want)
		}
	})
}

// TestShowHeader_KeepsLeadingSpaces: a `git show` message keeps the
// leading spaces of its body, as the commit has them.
func TestShowHeader_KeepsLeadingSpaces(t *testing.T) {
	show := "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: A <a@example.com>\nDate:   Fri Jan 2 03:04:05 2026 +0000\n\n    subject\n\n      indented body\n    line\n\n" + mailDiff
	ps, err := Parse([]byte(show), ParseOptions{Strip: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ps[0].Header.Message(), "subject\n\n  indented body\nline\n"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"Fri, 2 Jan 2026 03:04:05 +0530":   "2026-01-02T03:04:05+05:30",
		"Fri Jan 2 03:04:05 2026 -0800":    "2026-01-02T03:04:05-08:00",
		"2026-01-02T03:04:05Z":             "2026-01-02T03:04:05Z",
		"@1767323045 +0100":                "2026-01-02T04:04:05+01:00",
		"1767323045 +0000":                 "2026-01-02T03:04:05Z",
		" Sat, 3 Jan 2026 12:00:00 +0100 ": "2026-01-03T12:00:00+01:00",
	} {
		got, err := ParseDate(in)
		if err != nil || got.Format(time.RFC3339) != want {
			t.Errorf("ParseDate(%q) = %v %v, want %s", in, got.Format(time.RFC3339), err, want)
		}
	}
	if _, err := ParseDate("yesterday"); err == nil {
		t.Error("ParseDate accepted yesterday")
	}
}

// Without a Decoder only UTF-8 and ASCII mail is read: mail in another
// charset is an input error that wraps ErrNoCharsets (the front hands such
// a series to dome-full), and UTF-8 mail reads the same as with one.
func TestMailWithoutCharsets(t *testing.T) {
	saved := charsetDecoder.Load()
	charsetDecoder.Store(nil)
	t.Cleanup(func() { charsetDecoder.Store(saved) })
	latin1 := "From 0123456789012345678901234567890123456789 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.com>\nSubject: [PATCH] x\nContent-Type: text/plain; charset=ISO-8859-1\n\nFran\xe7ois\n---\n" + mailDiff
	_, err := Parse([]byte(latin1), ParseOptions{Source: "latin1.patch"})
	if !errors.Is(err, ErrNoCharsets) || !errkind.IsInput(err) || !strings.Contains(err.Error(), `"ISO-8859-1"`) {
		t.Fatalf("Latin-1 mail without charsets: %v", err)
	}
	word := strings.Replace(latin1, "Subject: [PATCH] x\nContent-Type: text/plain; charset=ISO-8859-1\n\nFran\xe7ois", "Subject: [PATCH] =?ISO-8859-1?Q?Fran=E7ois?=\n\nbody", 1)
	if _, err := Parse([]byte(word), ParseOptions{Source: "word.patch"}); !errors.Is(err, ErrNoCharsets) {
		t.Fatalf("an RFC 2047 Latin-1 word without charsets: %v", err)
	}
	utf8 := strings.Replace(latin1, "ISO-8859-1\n\nFran\xe7ois", "UTF-8\n\nFran\xc3\xa7ois", 1)
	ps, err := Parse([]byte(utf8), ParseOptions{Source: "utf8.patch"})
	if err != nil || len(ps) != 1 || !strings.Contains(ps[0].Header.Message(), "François") {
		t.Fatalf("UTF-8 mail without charsets: %v %+v", err, ps)
	}
	charsetDecoder.Store(saved)
	if _, err := Parse([]byte(latin1), ParseOptions{Source: "latin1.patch"}); err != nil {
		t.Fatalf("Latin-1 mail with charsets: %v", err)
	}
}
