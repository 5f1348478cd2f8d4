package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
)

// OpenPGPKey is a private key that signs tags the way git does: an armored
// detached signature over the tag object without its signature.
type OpenPGPKey struct {
	entity *openpgp.Entity
}

// KeyID returns the signing key's id in upper-case hex.
func (k *OpenPGPKey) KeyID() string {
	return strings.ToUpper(fmt.Sprintf("%016x", k.entity.PrimaryKey.KeyId))
}

// ReadOpenPGPKey reads an armored OpenPGP private key (the first entity of
// the keyring), decrypting it with passphrase when it is encrypted.
func ReadOpenPGPKey(armored, passphrase []byte) (*OpenPGPKey, error) {
	list, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(armored))
	if err != nil {
		return nil, fmt.Errorf("read OpenPGP key: %w", err)
	}
	if len(list) == 0 || list[0].PrivateKey == nil {
		return nil, errors.New("read OpenPGP key: no private key in the file")
	}
	e := list[0]
	if e.PrivateKey.Encrypted {
		if len(passphrase) == 0 {
			return nil, errors.New("read OpenPGP key: the key is encrypted; give its passphrase")
		}
		if err := e.PrivateKey.Decrypt(passphrase); err != nil {
			return nil, fmt.Errorf("read OpenPGP key: %w", err)
		}
		for _, sk := range e.Subkeys {
			if sk.PrivateKey != nil && sk.PrivateKey.Encrypted {
				if err := sk.PrivateKey.Decrypt(passphrase); err != nil {
					return nil, fmt.Errorf("read OpenPGP key: subkey: %w", err)
				}
			}
		}
	}
	return &OpenPGPKey{entity: e}, nil
}

// Sign returns the armored detached signature of payload (a TagSpec.Signer).
func (k *OpenPGPKey) Sign(payload []byte) (string, error) {
	var b bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&b, k.entity, bytes.NewReader(payload), nil); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ErrUnsigned is a tag without an OpenPGP signature.
var ErrUnsigned = errors.New("tag is not signed")

// VerifyTagSignature checks the OpenPGP signature of annotated tag h against
// an armored public keyring and returns the signing key's id.
func (r *Repo) VerifyTagSignature(h Hash, armoredKeyring []byte) (string, error) {
	t, payload, err := r.TagSignedPayload(h)
	if err != nil {
		return "", err
	}
	if t.PGPSignature == "" {
		return "", ErrUnsigned
	}
	if _, err := armor.Decode(bytes.NewReader(armoredKeyring)); err != nil {
		return "", fmt.Errorf("keyring is not an armored OpenPGP key: %w", err)
	}
	e, err := checkTagSignature(armoredKeyring, payload, t.PGPSignature)
	if err != nil {
		return "", fmt.Errorf("tag %s: bad signature: %w", t.Name, err)
	}
	return strings.ToUpper(fmt.Sprintf("%016x", e.PrimaryKey.KeyId)), nil
}

// checkTagSignature checks an armored detached signature of payload
// against an armored keyring, as go-git's Tag.Verify did.
func checkTagSignature(armoredKeyring, payload []byte, signature string) (*openpgp.Entity, error) {
	keyring, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(armoredKeyring))
	if err != nil {
		return nil, err
	}
	return openpgp.CheckArmoredDetachedSignature(keyring, bytes.NewReader(payload), strings.NewReader(signature), nil)
}

// PushRef pushes one ref (and nothing else) to remote, which is a remote
// name from the repository's config or a URL. It never forces: a ref that
// exists on the remote with another value is an error.
func (r *Repo) PushRef(ctx context.Context, remote, ref string) error {
	installFileTransport()
	spec := config.RefSpec(ref + ":" + ref)
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	var rem *git.Remote
	if IsURL(remote) {
		rem = git.NewRemote(r.storage, &config.RemoteConfig{Name: "dome-push", URLs: []string{remote}})
	} else {
		var err error
		if rem, err = r.repo.Remote(remote); err != nil {
			return fmt.Errorf("push %s: remote %q: %w", ref, remote, err)
		}
	}
	err := rem.PushContext(ctx, &git.PushOptions{RemoteName: rem.Config().Name, RefSpecs: []config.RefSpec{spec}})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("push %s to %s: %w", ref, remote, err)
	}
	return nil
}
