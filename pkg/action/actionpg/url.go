package actionpg

import (
	"net/url"
	"strings"

	"github.com/dome-registry/dome/internal/lazyre"
)

// EnvDatabaseURL is the environment variable that names the database, as the
// seed's .env.example spells it.
const EnvDatabaseURL = "DATABASE_URL"

// IsURL reports whether s names a PostgreSQL database: a postgres:// or
// postgresql:// URL, or a SQLAlchemy-style postgresql+<driver>:// one (the
// seed's DATABASE_URL=postgresql+psycopg://...).
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok {
		return false
	}
	base, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	return base == "postgres" || base == "postgresql"
}

// NormalizeURL rewrites a SQLAlchemy-style postgresql+<driver>:// URL to the
// postgresql:// form libpq and pgx read; other strings are returned as they
// are (pgx also reads libpq's "host=... dbname=..." form).
func NormalizeURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	base, _, hasDriver := strings.Cut(strings.ToLower(scheme), "+")
	if hasDriver && (base == "postgres" || base == "postgresql") {
		return "postgresql://" + rest
	}
	return s
}

var userPassword = lazyre.New(`^([A-Za-z][A-Za-z0-9+.-]*://[^:/@?#]*):[^/?#]*@`)

// Redact returns s with any password replaced by "xxxxx", for messages.
func Redact(s string) string {
	if !strings.Contains(s, "://") {
		if strings.Contains(s, "password") {
			return "(a connection string with a password)"
		}
		return s
	}
	u, err := url.Parse(NormalizeURL(s))
	if err != nil {
		// Mask what looks like a password; drop the query, which may hold one.
		s, _, _ = strings.Cut(userPassword().ReplaceAllString(s, "${1}:xxxxx@"), "?")
		return s
	}
	if _, has := u.User.Password(); u.User != nil && has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
