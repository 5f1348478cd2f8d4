package actiongit

import (
	"context"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/action/storetest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/signing"
)

// forge commits changes onto the store's branch behind its back, as a
// careless or hostile git user could.
func forge(t *testing.T, s *Store, msg string, files map[string][]byte, deletes ...string) gitstore.Hash {
	t.Helper()
	r := s.Repo()
	head, err := s.Head()
	if err != nil {
		t.Fatal(err)
	}
	tree, err := r.CommitTree(head)
	if err != nil {
		t.Fatal(err)
	}
	var changes []gitstore.Change
	for p, data := range files {
		b, err := r.WriteBlob(data)
		if err != nil {
			t.Fatal(err)
		}
		changes = append(changes, gitstore.Change{Path: p, Mode: gitstore.ModeFile, Hash: b})
	}
	for _, p := range deletes {
		changes = append(changes, gitstore.Change{Path: p, Delete: true})
	}
	nt, err := r.ApplyChanges(tree, changes)
	if err != nil {
		t.Fatal(err)
	}
	sig := gitstore.Signature{Name: "mallory", Email: "m@example.invalid", When: fixedNow().Add(1)}
	c, err := r.WriteCommit(gitstore.CommitSpec{Tree: nt, Parents: []gitstore.Hash{head}, Author: sig, Committer: sig, Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef(s.Branch(), c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAudit_CleanHistory(t *testing.T) {
	s := open(t, newBare(t), Options{})
	defer s.Close()
	rep, err := s.Audit(context.Background(), AuditOptions{})
	if err != nil || !rep.OK() || rep.Head != "" {
		t.Fatalf("audit of a missing branch: %+v, %v", rep, err)
	}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if _, err := s.Publish(context.Background(), storetest.Signed(t, "files.move", v, "x")); err != nil {
			t.Fatal(err)
		}
	}
	// Unrelated files beside the actions are not actions and not violations.
	forge(t, s, "docs", map[string][]byte{"registry/actions/README.md": []byte("hi"), "other/x.json": []byte("{}")})
	_, keys := storetest.Key(t)
	rep, err = s.Audit(context.Background(), AuditOptions{Keys: keys})
	if err != nil || !rep.OK() || rep.Commits != 3 || rep.Versions != 2 || rep.Verified != 2 {
		t.Fatalf("audit: %+v, %v", rep, err)
	}
}

func TestAudit_FindsTheCommitThatChangedAVersion(t *testing.T) {
	s := open(t, newBare(t), Options{})
	defer s.Close()
	ctx := context.Background()
	orig := storetest.Signed(t, "files.move", "1.0.0", "original")
	if _, err := s.Publish(ctx, orig); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, storetest.Signed(t, "files.copy", "1.0.0", "x")); err != nil {
		t.Fatal(err)
	}
	evil := storetest.Signed(t, "files.move", "1.0.0", "replaced")
	changed := forge(t, s, "rewrite", map[string][]byte{FilePath("files.move", "1.0.0"): evil.Document})
	removed := forge(t, s, "unpublish", nil, FilePath("files.copy", "1.0.0"))
	invalid := forge(t, s, "bad file", map[string][]byte{
		FilePath("files.zip", "1.0.0"):  storetest.Signed(t, "files.zip", "2.0.0", "x").Document,
		FilePath("files.tar", "1.0.0"):  []byte(`{"name": "files.tar", "version": "1.0.0"}`),
		FilePath("files.junk", "1.0.0"): []byte(`not json`),
	})

	// Another key set: the rewritten version is still signed by the test
	// key, so a key-based check alone would miss the rewrite.
	rep, err := s.Audit(ctx, AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind, commit, name string
	}{
		{KindChanged, changed.String(), "files.move"},
		{KindRemoved, removed.String(), "files.copy"},
		{KindInvalid, invalid.String(), "files.junk"},
		{KindInvalid, invalid.String(), "files.tar"},
		{KindInvalid, invalid.String(), "files.zip"},
	}
	if len(rep.Violations) != len(want) {
		t.Fatalf("violations = %+v", rep.Violations)
	}
	for i, w := range want {
		v := rep.Violations[i]
		if v.Kind != w.kind || v.Commit != w.commit || v.Name != w.name || v.Detail == "" {
			t.Errorf("violation %d = %+v, want %s in %s for %s", i, v, w.kind, w.commit[:7], w.name)
		}
	}
	if !strings.Contains(rep.Violations[4].Detail, "2.0.0") || !strings.Contains(rep.Violations[3].Detail, "canonical") {
		t.Errorf("details: %q / %q", rep.Violations[4].Detail, rep.Violations[3].Detail)
	}

	// With trusted keys, versions at the head that do not verify are named too.
	other, err := signing.GenerateKey("other", strings.NewReader(strings.Repeat("k", 64)))
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := signing.NewTrustedKeys(other.Public())
	rep, err = s.Audit(ctx, AuditOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	unverified := 0
	for _, v := range rep.Violations {
		if v.Kind == KindUnverified {
			unverified++
		}
	}
	if unverified != rep.Versions || rep.Verified != 0 {
		t.Fatalf("unverified %d of %d versions: %+v", unverified, rep.Versions, rep.Violations)
	}
}
