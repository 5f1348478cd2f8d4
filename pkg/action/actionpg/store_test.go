package actionpg_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actionpg"
	"github.com/dome-registry/dome/pkg/action/storetest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t *testing.T, url string) *actionpg.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := actionpg.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func count(t *testing.T, conn *pgx.Conn, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestOpen_MigrationsAreIdempotent(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ms, err := actionpg.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		s := open(t, url)
		v, err := s.SchemaVersion(context.Background())
		if err != nil || v != len(ms) {
			t.Fatalf("open #%d: schema version %d, %v; want %d", i+1, v, err, len(ms))
		}
	}
	conn := connect(t, url)
	if n := count(t, conn, "SELECT count(*) FROM schema_migrations"); n != len(ms) {
		t.Fatalf("schema_migrations has %d rows, want %d", n, len(ms))
	}
}

// Replicas start at once: every Open succeeds and each migration is applied
// exactly once.
func TestOpen_ConcurrentOpensMigrateOnce(t *testing.T) {
	url := pgtest.NewDatabase(t)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	stores := make([]*actionpg.Store, n)
	for i := range n {
		wg.Go(func() {
			stores[i], errs[i] = actionpg.Open(context.Background(), url)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open #%d: %v", i, err)
		}
		stores[i].Close()
	}
	ms, _ := actionpg.Migrations()
	if got := count(t, connect(t, url), "SELECT count(*) FROM schema_migrations"); got != len(ms) {
		t.Fatalf("schema_migrations has %d rows, want %d", got, len(ms))
	}
}

func TestOpen_RefusesChangedOrNewerMigrations(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	open(t, url).Close()
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, "UPDATE schema_migrations SET checksum = 'sha256:00' WHERE version = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := actionpg.Open(ctx, url); err == nil || !strings.Contains(err.Error(), "never edit an applied migration") {
		t.Fatalf("Open over an edited migration: %v", err)
	}
	ms, _ := actionpg.Migrations()
	if _, err := conn.Exec(ctx, "UPDATE schema_migrations SET checksum = $1 WHERE version = 1", ms[0].Checksum); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO schema_migrations (version, name, checksum) VALUES (999, '0999_future.sql', 'sha256:00')"); err != nil {
		t.Fatal(err)
	}
	if _, err := actionpg.Open(ctx, url); err == nil || !strings.Contains(err.Error(), "a newer dome migrated it") {
		t.Fatalf("Open of a database migrated by a newer dome: %v", err)
	}
}

func TestOpen_AcceptsTheSeedsURLSpelling(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := open(t, strings.Replace(url, "postgres://", "postgresql+psycopg://", 1))
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestOpen_BadURL_NamesItWithoutPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := actionpg.Open(ctx, "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=2")
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("the error shows the password: %v", err)
	}
	if _, err := actionpg.Open(ctx, ""); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("Open(\"\"): %v", err)
	}
}

// 50 publishers of one (name, version) with different bytes, over two pools
// (two replicas): exactly one is created, the others conflict, and the
// database holds the winner's bytes.
func TestPublish_ConcurrentDifferentBytes_ExactlyOneWins(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	stores := []*actionpg.Store{open(t, url), open(t, url)}
	const n = 50
	recs := make([]action.Record, n)
	for i := range recs {
		recs[i] = storetest.Signed(t, "files.move", "1.0.0", fmt.Sprintf("publisher %d", i))
	}
	var wg sync.WaitGroup
	results := make([]action.PublishResult, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { results[i], errs[i] = stores[i%2].Publish(ctx, recs[i]) })
	}
	wg.Wait()
	winner := -1
	for i := range n {
		switch {
		case errs[i] == nil && results[i].Created:
			if winner >= 0 {
				t.Fatalf("publishers %d and %d both created files.move@1.0.0", winner, i)
			}
			winner = i
		case errors.Is(errs[i], action.ErrImmutableConflict):
		default:
			t.Fatalf("publisher %d: created=%v err=%v, want created or ErrImmutableConflict", i, results[i].Created, errs[i])
		}
	}
	if winner < 0 {
		t.Fatal("no publisher created files.move@1.0.0")
	}
	got, err := stores[1].Get(ctx, "files.move", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Document, recs[winner].Document) || got.Hash != recs[winner].Hash {
		t.Fatalf("stored document is not the winner's:\n%s\nwant\n%s", got.Document, recs[winner].Document)
	}
	conn := connect(t, url)
	if c := count(t, conn, "SELECT count(*) FROM action_versions"); c != 1 {
		t.Fatalf("%d rows in action_versions, want 1", c)
	}
	// Republishing the winner's bytes is idempotent, from either replica.
	for _, s := range stores {
		res, err := s.Publish(ctx, recs[winner])
		if err != nil || res.Created || !bytes.Equal(res.Record.Document, recs[winner].Document) {
			t.Fatalf("republish: created=%v err=%v", res.Created, err)
		}
	}
}

// The columns hold data model, and reads return the exact bytes.
func TestPublish_Columns(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s := open(t, url)
	rec := storetest.Signed(t, "files.move", "1.1.0", "Move a file from A to B")
	res, err := s.Publish(ctx, rec)
	if err != nil || !res.Created {
		t.Fatalf("publish: created=%v err=%v", res.Created, err)
	}
	d, err := action.ParseDocument(rec.Document)
	if err != nil {
		t.Fatal(err)
	}
	var (
		doc                              []byte
		schema                           []byte
		hash, alg, kid, sig, description string
		deprecated                       bool
		reason                           *string
		createdAt                        time.Time
	)
	err = connect(t, url).QueryRow(ctx, `SELECT document, schema_json, hash, sig_alg, sig_kid, sig_b64, description,
    deprecated, deprecation_reason, created_at FROM action_versions WHERE name = 'files.move' AND version = '1.1.0'`).
		Scan(&doc, &schema, &hash, &alg, &kid, &sig, &description, &deprecated, &reason, &createdAt)
	if err != nil {
		t.Fatal(err)
	}
	var gotSchema, wantSchema any
	_ = json.Unmarshal(schema, &gotSchema)
	_ = json.Unmarshal(d.Payload, &wantSchema)
	switch {
	case !bytes.Equal(doc, rec.Document):
		t.Errorf("document column %s, want the published bytes %s", doc, rec.Document)
	case fmt.Sprint(gotSchema) != fmt.Sprint(wantSchema):
		t.Errorf("schema_json %s, want the payload %s", schema, d.Payload)
	case hash != d.Hash || alg != "ed25519" || kid != storetest.KID || sig != d.Signature.Sig:
		t.Errorf("hash/sig columns %s %s %s %s", hash, alg, kid, sig)
	case description != "Move a file from A to B" || deprecated || reason != nil || createdAt.IsZero():
		t.Errorf("description %q deprecated %v reason %v created_at %v", description, deprecated, reason, createdAt)
	}
	got, err := s.Get(ctx, "files.move", "1.1.0")
	if err != nil || !bytes.Equal(got.Document, rec.Document) || got.Hash != rec.Hash || got.Revision != "" {
		t.Fatalf("Get: %+v, %v", got, err)
	}
}

// jsonb and text cannot hold NUL characters; the document bytes can, so the
// store keeps such an action whole (schema_json NULL) and lists it right.
func TestPublish_NULCharacters(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s := open(t, url)
	_, trusted := storetest.Key(t)
	rec := storetest.Signed(t, "nul.test", "1.0.0", "a\x00b")
	if _, err := s.Publish(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "nul.test", "1.0.0")
	if err != nil || !bytes.Equal(got.Document, rec.Document) {
		t.Fatalf("Get: %s, %v", got.Document, err)
	}
	if v := action.VerifyRecord(got, trusted); !v.Verified {
		t.Fatalf("not verified: %s", v.Reason)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].Description != "a\x00b" {
		t.Fatalf("List: %+v, %v", list, err)
	}
	// A backslash-u0000 spelled with an escaped backslash is no NUL.
	rec2 := storetest.Signed(t, "nul.test", "1.0.1", `a\u0000b`)
	if _, err := s.Publish(ctx, rec2); err != nil {
		t.Fatal(err)
	}
	if n := count(t, connect(t, url), "SELECT count(*) FROM action_versions WHERE schema_json IS NOT NULL"); n != 1 {
		t.Fatalf("%d rows with schema_json, want 1", n)
	}
}

// Changing the stored bytes behind the store's back: reads return them as
// they are and verification reports verified=false.
func TestTamper_StoredBytesChanged_NotVerified(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s := open(t, url)
	_, trusted := storetest.Key(t)
	rec := storetest.Signed(t, "files.move", "1.0.0", "Move a file")
	if _, err := s.Publish(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "files.move", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if v := action.VerifyRecord(got, trusted); !v.Verified {
		t.Fatalf("untouched record not verified: %s", v.Reason)
	}
	conn := connect(t, url)
	tamper := []struct{ name, sql string }{
		{"one byte of the payload", `UPDATE action_versions SET document = convert_to(replace(convert_from(document, 'UTF8'), 'Move a file', 'Move a fild'), 'UTF8')`},
		{"payload and its hash member", `UPDATE action_versions SET document = convert_to(replace(convert_from(document, 'UTF8'), '"Move a file"', '"Delete a file"'), 'UTF8')`},
		{"the hash column", `UPDATE action_versions SET hash = 'sha256:' || repeat('0', 64)`},
	}
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := conn.Exec(ctx, "UPDATE action_versions SET document = $1, hash = $2", rec.Document, rec.Hash); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, tc.sql); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, "files.move", "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			v := action.VerifyRecord(got, trusted)
			if v.Verified || !errors.Is(v.Err, action.ErrBadSignature) || v.Reason == "" {
				t.Fatalf("tampered record: verified=%v err=%v reason=%q", v.Verified, v.Err, v.Reason)
			}
		})
	}
}

func TestGet_NotFound(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.NewDatabase(t))
	if _, err := s.Get(ctx, "files.move", "1.0.0"); !errors.Is(err, action.ErrActionNotFound) {
		t.Fatalf("unknown action: %v", err)
	}
	if _, err := s.Publish(ctx, storetest.Signed(t, "files.move", "1.0.0", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "files.move", "2.0.0"); !errors.Is(err, action.ErrVersionNotFound) {
		t.Fatalf("unknown version: %v", err)
	}
}

func TestPublish_RecordNotItsDocument_IsInvalid(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.NewDatabase(t))
	rec := storetest.Signed(t, "files.move", "1.0.0", "")
	bad := []action.Record{
		{Name: "files.copy", Version: rec.Version, Document: rec.Document, Hash: rec.Hash},
		{Name: rec.Name, Version: "1.0.1", Document: rec.Document, Hash: rec.Hash},
		{Name: rec.Name, Version: rec.Version, Document: rec.Document, Hash: "sha256:" + strings.Repeat("0", 64)},
		{Name: rec.Name, Version: rec.Version, Document: []byte("{"), Hash: rec.Hash},
	}
	for i, r := range bad {
		if _, err := s.Publish(ctx, r); !errors.Is(err, action.ErrInvalid) {
			t.Errorf("record %d: %v, want ErrInvalid", i, err)
		}
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("List after refused publishes: %+v, %v", list, err)
	}
}

func TestList_SemVerOrderAndLatest(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.NewDatabase(t))
	for _, v := range []string{"1.10.0", "1.2.0", "2.0.0-rc.1", "1.2.0-beta", "1.9.3"} {
		if _, err := s.Publish(ctx, storetest.Signed(t, "files.move", v, "move "+v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Publish(ctx, storetest.Signed(t, "a.first", "0.1.0", "")); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(list)
	want := `[{"Name":"a.first","LatestVersion":"0.1.0","Versions":["0.1.0"],"Description":"","Deprecated":null},` +
		`{"Name":"files.move","LatestVersion":"1.10.0","Versions":["1.2.0-beta","1.2.0","1.9.3","1.10.0","2.0.0-rc.1"],"Description":"move 1.10.0","Deprecated":null}]`
	if string(got) != want {
		t.Fatalf("List:\n%s\nwant\n%s", got, want)
	}
}

// Ready reports a stopped server.
func TestReady_FailsWhenServerStopped(t *testing.T) {
	c := pgtest.NewCluster(t)
	s := open(t, c.NewDatabase(t))
	if err := s.Ready(context.Background()); err != nil {
		t.Fatalf("Ready on a running server: %v", err)
	}
	c.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Ready(ctx); err == nil {
		t.Fatal("Ready succeeded with the server stopped")
	}
	if _, err := s.Get(ctx, "files.move", "1.0.0"); err == nil || errors.Is(err, action.ErrActionNotFound) {
		t.Fatalf("Get with the server stopped: %v, want a database error", err)
	}
}
