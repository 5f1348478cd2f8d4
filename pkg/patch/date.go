package patch

import (
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// ParseDate reads a date as git's identity code does for the dates dome
// meets: a mail Date header (RFC 2822, as git format-patch writes it, with
// its time zone kept), RFC 3339, or git's internal "@<unix seconds>
// [+zone]" (also "<unix seconds> +zone", as GIT_AUTHOR_DATE takes it), or
// git log's default "Fri Jan 2 03:04:05 2026 +0000".
func ParseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	f := strings.Fields(strings.TrimPrefix(s, "@"))
	if len(f) >= 1 && len(f) <= 2 && (strings.HasPrefix(s, "@") || len(f) == 2) {
		if sec, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			t := time.Unix(sec, 0).UTC()
			if len(f) == 2 {
				z, err := time.Parse("-0700", f[1])
				if err != nil {
					return time.Time{}, fmt.Errorf("bad date %q: bad zone %q", s, f[1])
				}
				t = t.In(z.Location())
			}
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := mail.ParseDate(s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("Mon Jan _2 15:04:05 2006 -0700", s); err == nil {
		return t, nil // git log's default format (git show output)
	}
	return time.Time{}, fmt.Errorf("bad date %q", s)
}

// Commit returns the commit git am makes of p on tree with parent: the
// author (name, address and date) and the message from the mail, the
// committer as given. A patch whose mail names no author (a plain diff)
// takes def as its author; one without a Date header, def's time.
func (p *Patch) Commit(tree OID, parent gitstore.Hash, def, committer gitstore.Signature) (gitstore.CommitSpec, error) {
	h := p.Header
	author := def
	if h.Author != "" || h.Email != "" {
		author.Name, author.Email = h.Author, h.Email
	}
	if h.Date != "" {
		t, err := ParseDate(h.Date)
		if err != nil {
			return gitstore.CommitSpec{}, &errkind.InputError{Source: "patch", Field: "Date header", Problem: err.Error(),
				Hint: "the author date must be an RFC 2822 date, as git format-patch writes it"}
		}
		author.When = t
	}
	c := gitstore.CommitSpec{Tree: gitstore.Hash(tree), Author: author, Committer: committer, Message: h.Message()}
	if !parent.IsZero() {
		c.Parents = []gitstore.Hash{parent}
	}
	return c, nil
}
