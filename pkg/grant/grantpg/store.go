package grantpg

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/grant"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLockKey is the advisory lock taken while migrating: "dome-grn".
const migrationLockKey int64 = 0x646f6d652d67726e

// Store is the PostgreSQL grant store; safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	name string
}

var _ grant.Store = (*Store)(nil)

// IsURL reports whether s is a postgres:// or postgresql:// URL.
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	s = strings.ToLower(scheme)
	return ok && (s == "postgres" || s == "postgresql")
}

// Redact returns a URL with its password masked, for messages.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(a database URL)"
	}
	if _, has := u.User.Password(); u.User != nil && has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	u.RawQuery = ""
	return u.String()
}

// Open connects to databaseURL and migrates it.
func Open(ctx context.Context, databaseURL string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("grant store: bad database URL %s: %w", Redact(databaseURL), err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("grant store %s: %w", Redact(databaseURL), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("grant store: connect to %s: %w", Redact(databaseURL), err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("grant store: migrate %s: %w", Redact(databaseURL), err)
	}
	return &Store{pool: pool, name: "postgres " + Redact(databaseURL)}, nil
}

func (s *Store) String() string { return s.name }

type migration struct {
	version  int
	name     string
	sql      string
	checksum string
}

func migrations() ([]migration, error) {
	files, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, f := range files {
		name := path.Base(f)
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", name)
		}
		b, _ := migrationFS.ReadFile(f)
		ms = append(ms, migration{v, name, string(b), canonical.Digest(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want number %04d", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate applies the missing migrations under a session advisory lock,
// refusing a database whose applied migrations differ from the embedded
// ones or that a newer dome migrated further.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLockKey)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS grant_schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	rows, err := conn.Query(ctx, "SELECT version, name, checksum FROM grant_schema_migrations ORDER BY version")
	if err != nil {
		return err
	}
	applied := map[int]migration{}
	for rows.Next() {
		var m migration
		if err := rows.Scan(&m.version, &m.name, &m.checksum); err != nil {
			rows.Close()
			return err
		}
		applied[m.version] = m
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(applied) > len(ms) {
		return fmt.Errorf("the database has %d grant migrations applied, this dome knows %d: a newer dome migrated it", len(applied), len(ms))
	}
	for _, m := range ms {
		if a, ok := applied[m.version]; ok {
			if a.checksum != m.checksum {
				return fmt.Errorf("migration %s was applied with checksum %s, this dome embeds %s: never edit an applied migration", m.name, a.checksum, m.checksum)
			}
			continue
		}
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO grant_schema_migrations (version, name, checksum) VALUES ($1, $2, $3)", m.version, m.name, m.checksum)
			return err
		}); err != nil {
			return fmt.Errorf("apply %s: %w", m.name, err)
		}
	}
	return nil
}

const revocationOf = `SELECT kind, value, reason, until, revoked_at FROM grant_revocations
WHERE issuer = $1 AND ((kind = 'jti' AND value = $2) OR (kind = 'profile_id' AND value = $3))
ORDER BY until DESC, kind ASC LIMIT 1`

// Lookup implements grant.Store in one round trip.
func (s *Store) Lookup(ctx context.Context, issuer, jti, profileID string) (grant.Status, error) {
	var st grant.Status
	var spProfile, spDigest, spMethod, rKind, rValue, rReason *string
	var spExp, spAt, rUntil, rAt *time.Time
	err := s.pool.QueryRow(ctx, `SELECT s.profile_id, s.grant_digest, s.method, s.expires_at, s.spent_at,
       r.kind, r.value, r.reason, r.until, r.revoked_at
FROM (SELECT 1) one
LEFT JOIN grant_spends s ON s.issuer = $1 AND s.jti = $2
LEFT JOIN LATERAL (`+revocationOf+`) r ON true`, issuer, jti, profileID).Scan(
		&spProfile, &spDigest, &spMethod, &spExp, &spAt, &rKind, &rValue, &rReason, &rUntil, &rAt)
	if err != nil {
		return st, fmt.Errorf("grant store: lookup %s: %w", jti, err)
	}
	if spAt != nil {
		st.Spent = &grant.Spend{Issuer: issuer, JTI: jti, ProfileID: *spProfile, Grant: *spDigest, Method: *spMethod, ExpiresAt: spExp.UTC(), SpentAt: spAt.UTC()}
	}
	if rKind != nil {
		st.Revoked = &grant.Revocation{Issuer: issuer, Kind: *rKind, Value: *rValue, Reason: *rReason, Until: rUntil.UTC(), RevokedAt: rAt.UTC()}
	}
	return st, nil
}

// Spend implements grant.Store: one statement inserts the spend unless the
// grant is revoked; the primary key turns every concurrent second spend
// into no row.
func (s *Store) Spend(ctx context.Context, sp grant.Spend) error {
	if err := sp.Check(); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO grant_spends (issuer, jti, profile_id, grant_digest, method, expires_at, spent_at)
SELECT $1, $2, $3, $4, $5, $6, $7
WHERE NOT EXISTS (SELECT 1 FROM grant_revocations WHERE issuer = $1 AND until > $7
                  AND ((kind = 'jti' AND value = $2) OR (kind = 'profile_id' AND value = $3)))
ON CONFLICT (issuer, jti) DO NOTHING`, sp.Issuer, sp.JTI, sp.ProfileID, sp.Grant, sp.Method, sp.ExpiresAt.UTC(), sp.SpentAt.UTC())
	if err != nil {
		return fmt.Errorf("grant store: spend %s: %w", sp.JTI, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var revoked bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM grant_revocations WHERE issuer = $1 AND until > $4
  AND ((kind = 'jti' AND value = $2) OR (kind = 'profile_id' AND value = $3)))`, sp.Issuer, sp.JTI, sp.ProfileID, sp.SpentAt.UTC()).Scan(&revoked); err != nil {
		return fmt.Errorf("grant store: spend %s: %w", sp.JTI, err)
	}
	if revoked {
		return grant.ErrRevoked
	}
	return grant.ErrSpent
}

// Revoke implements grant.Store.
func (s *Store) Revoke(ctx context.Context, r grant.Revocation) error {
	if err := r.Check(); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO grant_revocations (issuer, kind, value, reason, until, revoked_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (issuer, kind, value) DO UPDATE SET reason = EXCLUDED.reason, until = EXCLUDED.until, revoked_at = EXCLUDED.revoked_at
WHERE grant_revocations.until < EXCLUDED.until`, r.Issuer, r.Kind, r.Value, r.Reason, r.Until.UTC(), r.RevokedAt.UTC())
	if err != nil {
		return fmt.Errorf("grant store: revoke %s %s: %w", r.Kind, r.Value, err)
	}
	return nil
}

// Prune implements grant.Store.
func (s *Store) Prune(ctx context.Context, now time.Time) (int, error) {
	n := 0
	for _, q := range []string{"DELETE FROM grant_spends WHERE expires_at < $1", "DELETE FROM grant_revocations WHERE until < $1"} {
		tag, err := s.pool.Exec(ctx, q, now.UTC())
		if err != nil {
			return n, fmt.Errorf("grant store: prune: %w", err)
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}

// Close implements grant.Store.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
