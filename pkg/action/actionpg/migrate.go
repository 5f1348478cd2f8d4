package actionpg

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLockKey is the pg_advisory_lock key every dome process takes
// while it migrates: the bytes "dome-act" as a big-endian int64.
const migrationLockKey int64 = 0x646f6d652d616374

// Migration is one embedded schema change.
type Migration struct {
	Version  int    // the file's number: 0001_init.sql is 1
	Name     string // the file name
	SQL      string
	Checksum string // sha256:<hex> of the file
}

// Migrations returns the embedded migrations in order. Their numbers start
// at 1 and have no gaps.
func Migrations() ([]Migration, error) {
	files, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, f := range files {
		name := path.Base(f)
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", name)
		}
		b, err := migrationFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b), Checksum: canonical.Digest(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: want number %04d (numbers start at 1 without gaps)", m.Name, i+1)
		}
	}
	return ms, nil
}

// migrate applies the migrations the database lacks, each in a transaction
// of its own, holding a session advisory lock so that concurrent processes
// apply each migration once. It refuses a database whose applied migrations
// differ from the embedded ones (an edited migration) or that has
// migrations this binary does not know (a newer dome migrated it).
func migrate(ctx context.Context, pool *pgxpool.Pool) (err error) {
	ms, err := Migrations()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	locked := false
	defer func() {
		if locked {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_, uerr := conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", migrationLockKey)
			cancel()
			if uerr != nil {
				// The session may still hold the lock: end it.
				conn.Hijack().Close(context.Background())
				return
			}
		}
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	locked = true
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	rows, err := conn.Query(ctx, "SELECT version, name, checksum FROM schema_migrations ORDER BY version")
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	applied := map[int]Migration{}
	var newest Migration
	for rows.Next() {
		var m Migration
		if err := rows.Scan(&m.Version, &m.Name, &m.Checksum); err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		applied[m.Version] = m
		newest = m
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if newest.Version > len(ms) {
		return fmt.Errorf("the database has migration %d (%s) applied but this dome knows migrations up to %d only: a newer dome migrated it; run that dome version or newer", newest.Version, newest.Name, len(ms))
	}
	for _, m := range ms {
		if a, ok := applied[m.Version]; ok {
			if a.Checksum != m.Checksum {
				return fmt.Errorf("migration %d was applied as %s (%s) but this dome embeds %s (%s): a migration changed after it was applied; never edit an applied migration, add a new one", m.Version, a.Name, a.Checksum, m.Name, m.Checksum)
			}
			continue
		}
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)", m.Version, m.Name, m.Checksum)
			return err
		}); err != nil {
			return fmt.Errorf("apply migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// SchemaVersion returns the number of the newest migration applied to the
// database the store is connected to.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v *int
	err := s.pool.QueryRow(ctx, "SELECT max(version) FROM schema_migrations").Scan(&v)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, errors.New("schema_migrations is empty")
	}
	return *v, nil
}
