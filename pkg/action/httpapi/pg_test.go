package httpapi_test

import (
	"context"
	"os"
	"testing"

	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actionpg"
	"github.com/jackc/pgx/v5"
)

// TestMain shares one throwaway PostgreSQL cluster among the tests that ask
// for a database (started on first use; none without such a test).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// pgKit is the PostgreSQL store over one database of the throwaway cluster
// (made for t, emptied for every subtest: CREATE DATABASE costs seconds on a
// busy disk, TRUNCATE does not); a tamper is an UPDATE of the stored
// document bytes.
func pgKit(t *testing.T) storeKit {
	u := pgtest.NewDatabase(t)
	ctx := context.Background()
	s, err := actionpg.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	exec := func(t testing.TB, sql string, args ...any) {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	return storeKit{
		open: func(t testing.TB) action.Store {
			exec(t, "TRUNCATE action_versions, actions")
			return s
		},
		tamper: func(t testing.TB, _ action.Store, name, version string, edit func([]byte) []byte) {
			rec, err := s.Get(ctx, name, version)
			if err != nil {
				t.Fatal(err)
			}
			exec(t, "UPDATE action_versions SET document = $3 WHERE name = $1 AND version = $2", name, version, edit(rec.Document))
		},
	}
}

func TestAPI_PostgresStore(t *testing.T) { runSuite(t, pgKit(t)) }

// The same with the handler watching the store's change feed (LISTEN/NOTIFY):
// reads come from memory until a change is reported.
func TestAPI_PostgresStore_Watching(t *testing.T) {
	kit := pgKit(t)
	kit.watch = true
	runSuite(t, kit)
}
