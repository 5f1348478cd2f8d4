package actionpg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is the PostgreSQL action store. It is safe for concurrent use, and
// any number of processes may share one database.
type Store struct {
	pool *pgxpool.Pool
	name string // "postgres HOST:PORT/DB", for messages
}

// ErrBadURL is wrapped by Open's error for a database URL that does not parse.
var ErrBadURL = errors.New("bad database URL")

// DefaultConnectTimeout bounds each connection attempt when the URL sets no
// connect_timeout: an unreachable server fails a command instead of hanging.
const DefaultConnectTimeout = 10 * time.Second

var _ action.Store = (*Store)(nil)

// Open connects to the database at databaseURL (NormalizeURL: postgres://,
// postgresql:// or postgresql+psycopg://; pool settings such as
// pool_max_conns ride in the URL as pgxpool documents) and brings its schema
// up to date (the embedded migrations). Close releases the pool.
func Open(ctx context.Context, databaseURL string) (*Store, error) {
	if strings.TrimSpace(databaseURL) == "" {
		return nil, fmt.Errorf("no database URL: set %s (postgres://user:password@host:5432/dbname)", EnvDatabaseURL)
	}
	cfg, err := pgxpool.ParseConfig(NormalizeURL(databaseURL))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrBadURL, Redact(databaseURL), err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", Redact(databaseURL), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", Redact(databaseURL), err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate %s: %w", Redact(databaseURL), err)
	}
	name := fmt.Sprintf("postgres %s/%s", net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))), cfg.ConnConfig.Database)
	return &Store{pool: pool, name: name}, nil
}

// String names the store without secrets: "postgres HOST:PORT/DB".
func (s *Store) String() string { return s.name }

// row is what Publish writes besides the record's own fields.
type row struct {
	schemaJSON             json.RawMessage // nil: SQL NULL
	description            *string
	sigAlg, sigKID, sigB64 *string
}

// prepare checks rec (its document must be the action document it claims to
// be: name, version and payload hash) and derives the columns.
func prepare(rec action.Record) (action.Record, row, error) {
	d, err := action.ParseDocument(rec.Document)
	if err != nil {
		return rec, row{}, err
	}
	switch {
	case d.Name != rec.Name || d.Version != rec.Version:
		return rec, row{}, fmt.Errorf("%w: the document is %s@%s, the record says %s@%s", action.ErrInvalid, d.Name, d.Version, rec.Name, rec.Version)
	case rec.Hash == "":
		rec.Hash = d.Hash
	case rec.Hash != d.Hash:
		return rec, row{}, fmt.Errorf("%w: %s@%s: the record's hash %s is not the document's %s", action.ErrInvalid, rec.Name, rec.Version, rec.Hash, d.Hash)
	}
	var r row
	if !hasNULEscape(d.Payload) {
		r.schemaJSON = json.RawMessage(d.Payload)
	}
	if !strings.ContainsRune(d.Description, 0) {
		r.description = &d.Description
	}
	if s := d.Signature; s != nil {
		r.sigAlg, r.sigKID, r.sigB64 = &s.Alg, &s.KID, &s.Sig
	}
	return rec, r, nil
}

// hasNULEscape reports whether canonical JSON holds a \u0000 escape, which
// PostgreSQL's jsonb refuses.
func hasNULEscape(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '\\' {
			continue
		}
		if bytes.HasPrefix(doc[i+1:], []byte("u0000")) {
			return true
		}
		i++ // skip the escaped character (an escaped backslash included)
	}
	return false
}

// Publish stores rec in one transaction. The unique (name, version)
// constraint decides between concurrent publishers: the insert that loses
// finds the winner's row and compares hashes, so an identical republish is
// Created=false and a different document an ErrImmutableConflict.
func (s *Store) Publish(ctx context.Context, rec action.Record) (action.PublishResult, error) {
	rec, r, err := prepare(rec)
	if err != nil {
		return action.PublishResult{}, err
	}
	rec.Revision = ""
	var res action.PublishResult
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO actions (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", rec.Name); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO action_versions
    (name, version, schema_json, document, hash, sig_alg, sig_kid, sig_b64, description)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (name, version) DO NOTHING
RETURNING id`, rec.Name, rec.Version, r.schemaJSON, rec.Document, rec.Hash, r.sigAlg, r.sigKID, r.sigB64, r.description).Scan(&id)
		if err == nil {
			res = action.PublishResult{Created: true, Record: rec}
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		// Already stored (the conflicting insert waited for its writer to
		// commit, and this statement sees the committed row).
		stored := action.Record{Name: rec.Name, Version: rec.Version}
		var deprecated bool
		var reason *string
		if err := tx.QueryRow(ctx, "SELECT document, hash, deprecated, deprecation_reason FROM action_versions WHERE name = $1 AND version = $2",
			rec.Name, rec.Version).Scan(&stored.Document, &stored.Hash, &deprecated, &reason); err != nil {
			return err
		}
		if deprecated {
			stored.Deprecation = &action.Deprecation{Reason: deref(reason)}
		}
		if stored.Hash != rec.Hash {
			return fmt.Errorf("%s@%s is already published (%s) with other content (%s): %w",
				rec.Name, rec.Version, stored.Hash, rec.Hash, action.ErrImmutableConflict)
		}
		res = action.PublishResult{Created: false, Record: stored}
		return nil
	})
	if err != nil {
		if errors.Is(err, action.ErrImmutableConflict) {
			return action.PublishResult{}, err
		}
		return action.PublishResult{}, fmt.Errorf("postgres: publish %s@%s: %w", rec.Name, rec.Version, err)
	}
	return res, nil
}

// Get returns the stored document bytes of (name, version) and the hash
// recorded at publish time.
func (s *Store) Get(ctx context.Context, name, version string) (action.Record, error) {
	var doc []byte
	var hash, reason *string
	var deprecated *bool
	err := s.pool.QueryRow(ctx, `SELECT v.document, v.hash, v.deprecated, v.deprecation_reason
FROM actions a LEFT JOIN action_versions v ON v.name = a.name AND v.version = $2
WHERE a.name = $1`, name, version).Scan(&doc, &hash, &deprecated, &reason)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return action.Record{}, fmt.Errorf("action %q: %w", name, action.ErrActionNotFound)
	case err != nil:
		return action.Record{}, fmt.Errorf("postgres: get %s@%s: %w", name, version, err)
	case hash == nil:
		return action.Record{}, fmt.Errorf("action %q has no version %q (versions: %s): %w", name, version, strings.Join(s.versions(ctx, name), ", "), action.ErrVersionNotFound)
	}
	rec := action.Record{Name: name, Version: version, Document: doc, Hash: *hash}
	if deprecated != nil && *deprecated {
		rec.Deprecation = &action.Deprecation{Reason: deref(reason)}
	}
	return rec, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Deprecate sets or clears the deprecation of name@version (see
// action.Store) in one UPDATE; an unchanged row is not written (so watchers
// are not told of a change that is none).
func (s *Store) Deprecate(ctx context.Context, name, version string, d *action.Deprecation) (action.Record, error) {
	if err := action.CheckDeprecation(d); err != nil {
		return action.Record{}, err
	}
	var reason *string
	if d != nil {
		reason = &d.Reason
	}
	if _, err := s.pool.Exec(ctx, `UPDATE action_versions SET deprecated = $3, deprecation_reason = $4
WHERE name = $1 AND version = $2 AND (deprecated, deprecation_reason) IS DISTINCT FROM ($3, $4)`, name, version, d != nil, reason); err != nil {
		return action.Record{}, fmt.Errorf("postgres: deprecate %s@%s: %w", name, version, err)
	}
	return s.Get(ctx, name, version)
}

// versions returns the versions of name by SemVer precedence, for messages
// (nil when the query fails).
func (s *Store) versions(ctx context.Context, name string) []string {
	rows, err := s.pool.Query(ctx, "SELECT version FROM action_versions WHERE name = $1", name)
	if err != nil {
		return nil
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil
	}
	action.SortVersions(vs)
	return vs
}

// List returns every action with its versions sorted by SemVer precedence,
// its latest version (action.LatestVersion) and that version's description.
func (s *Store) List(ctx context.Context) ([]action.Summary, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, version, description,
    CASE WHEN description IS NULL THEN document END, deprecated, deprecation_reason
FROM action_versions`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list: %w", err)
	}
	type ver struct {
		version, description string
		deprecated           bool
		reason               string
	}
	byName := map[string][]ver{}
	for rows.Next() {
		var name, version string
		var desc, reason *string
		var doc []byte
		var deprecated bool
		if err := rows.Scan(&name, &version, &desc, &doc, &deprecated, &reason); err != nil {
			return nil, fmt.Errorf("postgres: list: %w", err)
		}
		v := ver{version: version, deprecated: deprecated, reason: deref(reason)}
		if desc != nil {
			v.description = *desc
		} else if d, err := action.ParseDocument(doc); err == nil {
			v.description = d.Description
		}
		byName[name] = append(byName[name], v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list: %w", err)
	}
	out := make([]action.Summary, 0, len(byName))
	for name, vs := range byName {
		sum := action.Summary{Name: name, Versions: make([]string, len(vs))}
		for i, v := range vs {
			sum.Versions[i] = v.version
			if v.deprecated {
				if sum.Deprecated == nil {
					sum.Deprecated = map[string]string{}
				}
				sum.Deprecated[v.version] = v.reason
			}
		}
		action.SortVersions(sum.Versions)
		sum.LatestVersion = action.LatestVersion(sum.Versions, sum.Deprecated)
		for _, v := range vs {
			if v.version == sum.LatestVersion {
				sum.Description = v.description
			}
		}
		out = append(out, sum)
	}
	slices.SortFunc(out, func(a, b action.Summary) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Ready pings the database.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// Close closes the pool's connections.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
