package grantfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dome-registry/dome/internal/grantstoretest"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/grant/grantfile"
)

func TestMain(m *testing.M) {
	if code, child := grantstoretest.ChildMain(func(loc string) (grant.Store, error) { return grantfile.Open(loc) }, os.Stdin, os.Stdout, os.Stderr); child {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func opener(t testing.TB) grantstoretest.Opener {
	dir := filepath.Join(t.TempDir(), "grants")
	return func(t testing.TB) grant.Store {
		s, err := grantfile.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func TestConformance(t *testing.T) { grantstoretest.Run(t, opener) }

func TestEightProcessesSpendOneGrant(t *testing.T) {
	grantstoretest.SpendFromProcesses(t, filepath.Join(t.TempDir(), "grants"), 8)
}

func TestKill9LosesNoAcknowledgedSpend(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "grants")
	acked := grantstoretest.KillDuringSpends(t, dir, 300)
	s, err := grantfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	grantstoretest.CheckAcked(t, s, acked)
}
