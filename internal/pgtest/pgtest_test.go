package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestNewDatabase_IsEmptyAndSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE x (id int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("table x of one database is visible in another")
	}
}

func TestCluster_StopEndsConnections(t *testing.T) {
	ctx := context.Background()
	c := NewCluster(t)
	u := c.NewDatabase(t)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if err := conn.Ping(ctx); err == nil {
		t.Fatal("ping succeeded after Stop")
	}
	if _, err := pgx.Connect(ctx, u); err == nil {
		t.Fatal("connect succeeded after Stop")
	}
	dir := c.dir
	c.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cluster directory %s still there after Close: %v", dir, err)
	}
}

func TestFindBin(t *testing.T) {
	dir, err := FindBin()
	if err != nil {
		need(t, err)
	}
	t.Logf("server binaries in %s", dir)
}
