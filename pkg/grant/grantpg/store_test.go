package grantpg_test

import (
	"context"
	"os"
	"testing"

	"github.com/dome-registry/dome/internal/grantstoretest"
	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/grant/grantpg"
)

func TestMain(m *testing.M) {
	if code, child := grantstoretest.ChildMain(func(loc string) (grant.Store, error) { return grantpg.Open(context.Background(), loc) }, os.Stdin, os.Stdout, os.Stderr); child {
		os.Exit(code)
	}
	os.Exit(pgtest.Main(m))
}

func opener(t testing.TB) grantstoretest.Opener {
	url := pgtest.NewDatabase(t)
	return func(t testing.TB) grant.Store {
		s, err := grantpg.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func TestConformance(t *testing.T) { grantstoretest.Run(t, opener) }

func TestEightProcessesSpendOneGrant(t *testing.T) {
	url := pgtest.NewDatabase(t)
	// Migrate once, so the processes race on the spend, not the schema.
	s, err := grantpg.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	grantstoretest.SpendFromProcesses(t, url, 8)
}

func TestKill9LosesNoAcknowledgedSpend(t *testing.T) {
	url := pgtest.NewDatabase(t)
	acked := grantstoretest.KillDuringSpends(t, url, 300)
	s, err := grantpg.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	grantstoretest.CheckAcked(t, s, acked)
}

func TestMigrationsIdempotent(t *testing.T) {
	url := pgtest.NewDatabase(t)
	for i := 0; i < 2; i++ {
		s, err := grantpg.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}
