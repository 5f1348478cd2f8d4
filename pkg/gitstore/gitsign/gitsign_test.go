package gitsign_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitsign"
)

// testKey makes an OpenPGP key pair and returns (armored private, armored
// public); with a passphrase the private key is encrypted with it.
func testKey(t *testing.T, name string, passphrase []byte) ([]byte, []byte) {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", name+"@dome.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	var pub bytes.Buffer
	w, _ := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if passphrase != nil {
		if err := e.EncryptPrivateKeys(passphrase, nil); err != nil {
			t.Fatal(err)
		}
	}
	var priv bytes.Buffer
	w, _ = armor.Encode(&priv, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivateWithoutSigning(w, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return priv.Bytes(), pub.Bytes()
}

func newRepo(t *testing.T) (*gittest.Repo, *gitstore.Repo, gitstore.Hash) {
	t.Helper()
	g := gittest.New(t)
	g.Write(map[string]string{"a.txt": "one\n"})
	c, _ := gitstore.ParseHash(g.Commit("first"))
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return g, r, c
}

var when = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestSignedTag_VerifiedByDomeGoGitAndGit(t *testing.T) {
	g, r, c := newRepo(t)
	priv, pub := testKey(t, "release", nil)
	key, err := gitsign.ReadOpenPGPKey(priv, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.WriteTag(gitstore.TagSpec{Name: "signed", Target: c, Tagger: gitstore.Signature{Name: "T", Email: "t@dome.invalid", When: when}, Message: "signed release\n", Signer: key.Sign})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef("refs/tags/signed", h, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	id, err := gitsign.VerifyTagSignature(r, h, pub)
	if err != nil || id != key.KeyID() {
		t.Fatalf("verify = %q, %v; want %s", id, err, key.KeyID())
	}
	// go-git, which verified dome's tags before, agrees.
	if e, err := goGitVerify(t, g, h, pub); err != nil || fmt.Sprintf("%016X", e.PrimaryKey.KeyId) != key.KeyID() {
		t.Fatalf("go-git's Tag.Verify: %v", err)
	}
	_, otherPub := testKey(t, "other", nil)
	if _, err := gitsign.VerifyTagSignature(r, h, otherPub); err == nil || !strings.Contains(err.Error(), "tag signed: bad signature") {
		t.Fatalf("a signature verified against the wrong key: %v", err)
	}
	if _, err := gitsign.VerifyTagSignature(r, h, []byte("not armored")); err == nil || !strings.Contains(err.Error(), "not an armored OpenPGP key") {
		t.Fatalf("a keyring that is no key: %v", err)
	}
	plain, _ := r.WriteTag(gitstore.TagSpec{Name: "plain", Target: c, Tagger: gitstore.Signature{Name: "T", Email: "t@x", When: when}, Message: "x\n"})
	if _, err := gitsign.VerifyTagSignature(r, plain, pub); !errors.Is(err, gitsign.ErrUnsigned) {
		t.Fatalf("unsigned tag: %v", err)
	}

	// git tag -v agrees (test only: dome never runs git or gpg), and a tag
	// git signs with gpg verifies in dome.
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Skip("gpg not installed; skipping the cross-checks with git tag -v and git tag -s")
	}
	home := t.TempDir()
	env := append(gittest.Env(), "GNUPGHOME="+home)
	gpg := func(args ...string) {
		t.Helper()
		cmd := exec.Command("gpg", append([]string{"--batch", "--yes"}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gpg %v: %v\n%s", args, err, out)
		}
	}
	privFile := filepath.Join(home, "priv.asc")
	os.WriteFile(privFile, priv, 0o600)
	gpg("--import", privFile)
	v := exec.Command("git", "-C", g.Dir, "tag", "-v", "signed")
	v.Env = env
	if out, err := v.CombinedOutput(); err != nil || !strings.Contains(string(out), "Good signature") {
		t.Fatalf("git tag -v: %v\n%s", err, out)
	}
	s := exec.Command("git", "-C", g.Dir, "tag", "-s", "-u", key.KeyID(), "-m", "signed by git\n\nwith a body", "by-git")
	s.Env = env
	if out, err := s.CombinedOutput(); err != nil {
		t.Fatalf("git tag -s: %v\n%s", err, out)
	}
	byGit, err := r.Ref("refs/tags/by-git")
	if err != nil {
		t.Fatal(err)
	}
	if id, err := gitsign.VerifyTagSignature(r, byGit, pub); err != nil || id != key.KeyID() {
		t.Fatalf("a tag signed by git: %q, %v", id, err)
	}
	if _, err := goGitVerify(t, g, byGit, pub); err != nil {
		t.Fatalf("go-git's Tag.Verify of the tag signed by git: %v", err)
	}
}

// goGitVerify checks a tag as go-git's object.Tag.Verify did for dome,
// on the object as git stores it.
func goGitVerify(t *testing.T, g *gittest.Repo, h gitstore.Hash, pub []byte) (*openpgp.Entity, error) {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "tag", h.String())
	cmd.Dir = g.Dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TagObject)
	obj.Write(raw)
	ot := &object.Tag{}
	if err := ot.Decode(obj); err != nil {
		t.Fatal(err)
	}
	return ot.Verify(string(pub))
}

func TestReadOpenPGPKey(t *testing.T) {
	pass := []byte("correct horse")
	enc, _ := testKey(t, "encrypted", pass)
	if _, err := gitsign.ReadOpenPGPKey(enc, nil); err == nil || !strings.Contains(err.Error(), "give its passphrase") {
		t.Errorf("an encrypted key without a passphrase: %v", err)
	}
	if _, err := gitsign.ReadOpenPGPKey(enc, []byte("wrong")); err == nil {
		t.Error("an encrypted key opened with the wrong passphrase")
	}
	key, err := gitsign.ReadOpenPGPKey(enc, pass)
	if err != nil {
		t.Fatal(err)
	}
	if sig, err := key.Sign([]byte("payload")); err != nil || !strings.HasPrefix(sig, "-----BEGIN PGP SIGNATURE-----") {
		t.Errorf("Sign = %q, %v", sig, err)
	}
	_, pub := testKey(t, "public only", nil)
	if _, err := gitsign.ReadOpenPGPKey(pub, nil); err == nil || !strings.Contains(err.Error(), "no private key") {
		t.Errorf("a public key: %v", err)
	}
	if _, err := gitsign.ReadOpenPGPKey([]byte("junk"), nil); err == nil {
		t.Error("junk read as a key")
	}
}
