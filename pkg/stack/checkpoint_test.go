package stack

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

func TestCheckpointMessage_RoundTrip(t *testing.T) {
	cases := []CheckpointInfo{
		{RunID: "r1", ProposalID: "p1", DiffDigest: "sha256:00"},
		{RunID: "r1", WaveID: "w2", ProposalID: "p1~split", ParentProposalID: "p1", DiffDigest: "sha256:11"},
	}
	for _, ci := range cases {
		msg := CheckpointMessage(ci, "")
		got, ok := ParseCheckpoint(msg)
		if !ok || got != ci {
			t.Errorf("%q -> %+v %v, want %+v", msg, got, ok, ci)
		}
	}
	if _, ok := ParseCheckpoint("fix a bug\n\nSigned-off-by: x <y>\n"); ok {
		t.Error("a commit without dome trailers parsed as a checkpoint")
	}
	if got := CheckpointMessage(CheckpointInfo{RunID: "r", ProposalID: "p"}, "two\nlines"); got != "two lines\n\nDome-Run-Id: r\nDome-Proposal-Id: p\n" {
		t.Errorf("message %q", got)
	}
}

func TestChain(t *testing.T) {
	r := gittest.New(t)
	r.Write(map[string]string{"a": "1\n"})
	base, _ := gitstore.ParseHash(r.Commit("base"))
	repo, err := gitstore.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	tree, _ := repo.CommitTree(base)
	sig := gitstore.Signature{Name: "t", Email: "t@x", When: time.Unix(1767322800, 0).UTC()}
	head := base
	var ids []gitstore.Hash
	for _, p := range []string{"p1", "p2", "p3"} {
		head, err = WriteCheckpoint(repo, head, tree, CheckpointInfo{RunID: "r", ProposalID: p, DiffDigest: "sha256:" + p}, "", sig, sig)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, head)
	}
	ch, err := Chain(repo, base, head, 10)
	if err != nil || len(ch) != 3 {
		t.Fatalf("chain %v %v", ch, err)
	}
	for i, c := range ch {
		if c.Commit != ids[i] || !c.IsDome || c.Checkpoint.ProposalID != []string{"p1", "p2", "p3"}[i] {
			t.Errorf("chain[%d] = %+v", i, c)
		}
	}
	if ch[0].Parent != base {
		t.Errorf("first parent %s, want base", ch[0].Parent)
	}
	if ch, err := Chain(repo, head, head, 10); err != nil || len(ch) != 0 {
		t.Errorf("empty chain: %v %v", ch, err)
	}
	if _, err := Chain(repo, ids[2], ids[0], 10); !errors.Is(err, ErrNotAncestor) {
		t.Errorf("descendant as from: %v", err)
	}
	if _, err := Chain(repo, base, head, 2); !errors.Is(err, ErrNotAncestor) {
		t.Errorf("limit: %v", err)
	}
	for _, c := range []struct {
		anc, head gitstore.Hash
		want      bool
	}{{base, head, true}, {ids[1], head, true}, {head, head, true}, {head, base, false}} {
		if got, err := IsAncestor(repo, c.anc, c.head, 100); err != nil || got != c.want {
			t.Errorf("IsAncestor(%s, %s) = %v %v", c.anc.Short(), c.head.Short(), got, err)
		}
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	f.Add(CheckpointMessage(CheckpointInfo{RunID: "r", WaveID: "wave-1", ProposalID: "p", DiffDigest: "sha256:00"}, ""))
	f.Add("subject\n\nDome-Run-Id: r\nDome-Proposal-Id: \n")
	f.Add("")
	f.Fuzz(func(t *testing.T, msg string) {
		ci, ok := ParseCheckpoint(msg)
		if !ok {
			return
		}
		for _, v := range []string{ci.RunID, ci.WaveID, ci.ProposalID, ci.ParentProposalID, ci.DiffDigest} {
			if strings.ContainsAny(v, "\n\r") || v != strings.TrimSpace(v) {
				t.Fatalf("value %q keeps whitespace", v)
			}
		}
		// what dome writes from it reads back the same
		if got, ok := ParseCheckpoint(CheckpointMessage(ci, "")); !ok || got != ci {
			t.Fatalf("round trip of %+v gave %+v %v", ci, got, ok)
		}
	})
}
