package grantstoretest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/grant"
)

// Opener opens the store under test. Every call of one Opener opens the
// same backing location (a folder, a database), so the suite can check that
// what one handle recorded another sees, and that it survives a reopen.
type Opener func(t testing.TB) grant.Store

// NewOpener returns an Opener for a fresh location.
type NewOpener func(t testing.TB) Opener

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func spend(issuer, jti, profile string) grant.Spend {
	return grant.Spend{Issuer: issuer, JTI: jti, ProfileID: profile, Grant: "sha256:" + fmt.Sprintf("%064x", len(jti)), Method: "patch-proposal/submit_patch", ExpiresAt: t0.Add(15 * time.Minute), SpentAt: t0}
}

func revocation(issuer, kind, value string, until time.Time) grant.Revocation {
	return grant.Revocation{Issuer: issuer, Kind: kind, Value: value, Reason: "test", Until: until, RevokedAt: t0}
}

// Run runs the conformance suite.
func Run(t *testing.T, newOpener NewOpener) {
	ctx := context.Background()
	t.Run("SpendOnce", func(t *testing.T) {
		s := newOpener(t)(t)
		st, err := s.Lookup(ctx, "coord", "j1", "tp-1")
		if err != nil || st.Spent != nil || st.Revoked != nil {
			t.Fatalf("empty store: %+v %v", st, err)
		}
		if err := s.Spend(ctx, spend("coord", "j1", "tp-1")); err != nil {
			t.Fatal(err)
		}
		if err := s.Spend(ctx, spend("coord", "j1", "tp-1")); !errors.Is(err, grant.ErrSpent) {
			t.Fatalf("second spend: %v, want ErrSpent", err)
		}
		st, err = s.Lookup(ctx, "coord", "j1", "tp-1")
		if err != nil || st.Spent == nil || st.Spent.JTI != "j1" || !st.Spent.SpentAt.Equal(t0) || st.Spent.Method != "patch-proposal/submit_patch" {
			t.Fatalf("after spend: %+v %v", st.Spent, err)
		}
		// Spent jtis are per issuer.
		if err := s.Spend(ctx, spend("other", "j1", "tp-1")); err != nil {
			t.Fatalf("same jti, other issuer: %v", err)
		}
	})
	t.Run("RevokeByJTIAndProfile", func(t *testing.T) {
		s := newOpener(t)(t)
		until := t0.Add(time.Hour)
		if err := s.Revoke(ctx, revocation("coord", grant.RevokeJTI, "j2", until)); err != nil {
			t.Fatal(err)
		}
		st, _ := s.Lookup(ctx, "coord", "j2", "tp-x")
		if st.Revoked == nil || st.Revoked.Kind != grant.RevokeJTI || !st.Revoked.Until.Equal(until) || st.Revoked.Reason != "test" {
			t.Fatalf("jti revocation: %+v", st.Revoked)
		}
		if err := s.Spend(ctx, spend("coord", "j2", "tp-x")); !errors.Is(err, grant.ErrRevoked) {
			t.Fatalf("spend of a revoked jti: %v", err)
		}
		if st, _ := s.Lookup(ctx, "coord", "j2", "tp-x"); st.Spent != nil {
			t.Fatal("a refused spend was recorded")
		}
		if err := s.Revoke(ctx, revocation("coord", grant.RevokeProfile, "tp-9", until)); err != nil {
			t.Fatal(err)
		}
		for _, jti := range []string{"j3", "j4"} {
			st, _ := s.Lookup(ctx, "coord", jti, "tp-9")
			if st.Revoked == nil || st.Revoked.Kind != grant.RevokeProfile {
				t.Fatalf("%s of profile tp-9: %+v", jti, st.Revoked)
			}
		}
		if st, _ := s.Lookup(ctx, "other", "j3", "tp-9"); st.Revoked != nil {
			t.Fatal("a revocation crossed issuers")
		}
		// Revoking again extends, never shortens.
		later := until.Add(time.Hour)
		if err := s.Revoke(ctx, revocation("coord", grant.RevokeJTI, "j2", later)); err != nil {
			t.Fatal(err)
		}
		if err := s.Revoke(ctx, revocation("coord", grant.RevokeJTI, "j2", t0.Add(time.Minute))); err != nil {
			t.Fatal(err)
		}
		if st, _ := s.Lookup(ctx, "coord", "j2", "tp-x"); st.Revoked == nil || !st.Revoked.Until.Equal(later) {
			t.Fatalf("until after extend and shorten: %+v", st.Revoked)
		}
	})
	t.Run("Prune", func(t *testing.T) {
		s := newOpener(t)(t)
		short := spend("coord", "short", "tp-1")
		short.ExpiresAt = t0.Add(time.Minute)
		long := spend("coord", "long", "tp-1")
		long.ExpiresAt = t0.Add(time.Hour)
		for _, sp := range []grant.Spend{short, long} {
			if err := s.Spend(ctx, sp); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Revoke(ctx, revocation("coord", grant.RevokeProfile, "tp-old", t0.Add(2*time.Minute))); err != nil {
			t.Fatal(err)
		}
		n, err := s.Prune(ctx, t0.Add(10*time.Minute))
		if err != nil || n != 2 {
			t.Fatalf("prune: %d %v, want 2", n, err)
		}
		if st, _ := s.Lookup(ctx, "coord", "short", "tp-old"); st.Spent != nil || st.Revoked != nil {
			t.Fatalf("pruned entries remain: %+v", st)
		}
		if st, _ := s.Lookup(ctx, "coord", "long", "tp-1"); st.Spent == nil {
			t.Fatal("prune dropped a live spend")
		}
	})
	t.Run("Refuses", func(t *testing.T) {
		s := newOpener(t)(t)
		bad := spend("coord", "../x", "tp-1")
		if err := s.Spend(ctx, bad); err == nil {
			t.Error("a jti with a path in it was accepted")
		}
		noExp := spend("coord", "j", "tp-1")
		noExp.ExpiresAt = time.Time{}
		if err := s.Spend(ctx, noExp); err == nil {
			t.Error("a spend without expiry was accepted")
		}
		r := revocation("coord", "everything", "x", t0.Add(time.Hour))
		if err := s.Revoke(ctx, r); err == nil {
			t.Error("an unknown revocation kind was accepted")
		}
		r = revocation("coord", grant.RevokeJTI, "x", t0.Add(time.Hour))
		r.Reason = "line\nbreak"
		if err := s.Revoke(ctx, r); err == nil {
			t.Error("a reason with a newline was accepted")
		}
	})
	t.Run("SeenAcrossHandlesAndReopen", func(t *testing.T) {
		open := newOpener(t)
		a, b := open(t), open(t)
		if err := a.Spend(ctx, spend("coord", "j5", "tp-1")); err != nil {
			t.Fatal(err)
		}
		if err := b.Spend(ctx, spend("coord", "j5", "tp-1")); !errors.Is(err, grant.ErrSpent) {
			t.Fatalf("second handle spent a spent jti: %v", err)
		}
		if err := b.Revoke(ctx, revocation("coord", grant.RevokeProfile, "tp-7", t0.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
		if st, _ := a.Lookup(ctx, "coord", "j6", "tp-7"); st.Revoked == nil {
			t.Fatal("first handle does not see the second's revocation")
		}
		a.Close()
		b.Close()
		c := open(t)
		st, err := c.Lookup(ctx, "coord", "j5", "tp-7")
		if err != nil || st.Spent == nil || st.Revoked == nil {
			t.Fatalf("after reopen: %+v %v", st, err)
		}
	})
	t.Run("ConcurrentSpendsOfOneGrant", func(t *testing.T) {
		open := newOpener(t)
		handles := []grant.Store{open(t), open(t)}
		const n = 50
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, spent := 0, 0
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				err := handles[i%2].Spend(ctx, spend("coord", "hot", "tp-1"))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, grant.ErrSpent):
					spent++
				default:
					t.Errorf("spend: %v", err)
				}
			}(i)
		}
		wg.Wait()
		if wins != 1 || spent != n-1 {
			t.Fatalf("%d goroutines spending one grant: %d succeeded, %d refused; want exactly 1", n, wins, spent)
		}
	})
	t.Run("ConcurrentDistinctSpends", func(t *testing.T) {
		s := newOpener(t)(t)
		var wg sync.WaitGroup
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if err := s.Spend(ctx, spend("coord", fmt.Sprintf("d%03d", i), "tp-1")); err != nil {
					t.Errorf("spend d%03d: %v", i, err)
				}
			}(i)
		}
		wg.Wait()
		for i := 0; i < 64; i++ {
			if st, _ := s.Lookup(ctx, "coord", fmt.Sprintf("d%03d", i), "tp-1"); st.Spent == nil {
				t.Fatalf("d%03d was acknowledged but is not spent", i)
			}
		}
	})
}
