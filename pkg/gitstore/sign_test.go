package gitstore_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// testKey makes an OpenPGP key pair and returns (armored private, armored public).
func testKey(t *testing.T, name string) ([]byte, []byte) {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", name+"@dome.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	var priv, pub bytes.Buffer
	w, _ := armor.Encode(&priv, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w, _ = armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return priv.Bytes(), pub.Bytes()
}

func TestSignedTag_VerifiedByDomeAndGit(t *testing.T) {
	g, ids := fixture(t)
	r, _ := gitstore.Open(g.Dir)
	priv, pub := testKey(t, "release")
	key, err := gitstore.ReadOpenPGPKey(priv, nil)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h, err := r.WriteTag(gitstore.TagSpec{Name: "signed", Target: mustHash(t, ids["c2"]), Tagger: gitstore.Signature{Name: "T", Email: "t@dome.invalid", When: when}, Message: "signed release\n", Signer: key.Sign})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef("refs/tags/signed", h, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	id, err := r.VerifyTagSignature(h, pub)
	if err != nil || id != key.KeyID() {
		t.Fatalf("verify = %q, %v; want %s", id, err, key.KeyID())
	}
	_, otherPub := testKey(t, "other")
	if _, err := r.VerifyTagSignature(h, otherPub); err == nil {
		t.Fatal("a signature verified against the wrong key")
	}
	plain, _ := r.WriteTag(gitstore.TagSpec{Name: "plain", Target: mustHash(t, ids["c2"]), Tagger: gitstore.Signature{Name: "T", Email: "t@x", When: when}, Message: "x\n"})
	if _, err := r.VerifyTagSignature(plain, pub); err != gitstore.ErrUnsigned {
		t.Fatalf("unsigned tag: %v", err)
	}

	// git tag -v agrees (test only: dome never runs git or gpg).
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Skip("gpg not installed; skipping the cross-check with git tag -v")
	}
	home := t.TempDir()
	env := append(gittest.Env(), "GNUPGHOME="+home)
	pubFile := filepath.Join(home, "pub.asc")
	os.WriteFile(pubFile, pub, 0o600)
	imp := exec.Command("gpg", "--batch", "--import", pubFile)
	imp.Env = env
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("gpg --import: %v\n%s", err, out)
	}
	v := exec.Command("git", "-C", g.Dir, "tag", "-v", "signed")
	v.Env = env
	out, err := v.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Good signature") {
		t.Fatalf("git tag -v: %v\n%s", err, out)
	}
}

func TestPushRef_OnlyThatRef(t *testing.T) {
	g, ids := fixture(t)
	r, _ := gitstore.Open(g.Dir)
	bare := gittest.NewBare(t)
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h, _ := r.WriteTag(gitstore.TagSpec{Name: "registry/x/v1.0.0", Target: mustHash(t, ids["c1"]), Tagger: gitstore.Signature{Name: "T", Email: "t@x", When: when}, Message: "r\n"})
	if err := r.UpdateRef("refs/tags/registry/x/v1.0.0", h, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if err := r.PushRef(context.Background(), "file://"+bare.Dir, "refs/tags/registry/x/v1.0.0"); err != nil {
		t.Fatal(err)
	}
	refs := bare.Git("ls-remote", bare.Dir)
	if !strings.Contains(refs, h.String()+"\trefs/tags/registry/x/v1.0.0") {
		t.Fatalf("tag not pushed:\n%s", refs)
	}
	if strings.Contains(refs, "refs/heads/") || strings.Contains(refs, "refs/tags/ann") {
		t.Fatalf("more than the tag was pushed:\n%s", refs)
	}
	// A second push of the same ref is a no-op; a different value is refused (never forced).
	if err := r.PushRef(context.Background(), "file://"+bare.Dir, "refs/tags/registry/x/v1.0.0"); err != nil {
		t.Fatalf("re-push: %v", err)
	}
	h2, _ := r.WriteTag(gitstore.TagSpec{Name: "registry/x/v1.0.0", Target: mustHash(t, ids["c2"]), Tagger: gitstore.Signature{Name: "T", Email: "t@x", When: when}, Message: "moved\n"})
	if err := r.UpdateRef("refs/tags/registry/x/v1.0.0", h2, h); err != nil {
		t.Fatal(err)
	}
	if err := r.PushRef(context.Background(), "file://"+bare.Dir, "refs/tags/registry/x/v1.0.0"); err == nil {
		t.Fatal("push over a different remote value succeeded")
	}
}
