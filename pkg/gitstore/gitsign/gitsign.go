package gitsign

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"

	"github.com/dome-registry/dome/pkg/gitstore"
)

// OpenPGPKey is a private key that signs tags the way git does: an armored
// detached signature over the tag object without its signature.
type OpenPGPKey struct {
	entity *openpgp.Entity
}

// KeyID returns the signing key's id in upper-case hex.
func (k *OpenPGPKey) KeyID() string { return keyID(k.entity) }

func keyID(e *openpgp.Entity) string {
	return strings.ToUpper(fmt.Sprintf("%016x", e.PrimaryKey.KeyId))
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

// Sign returns the armored detached signature of payload (a
// gitstore.TagSpec.Signer).
func (k *OpenPGPKey) Sign(payload []byte) (string, error) {
	var b bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&b, k.entity, bytes.NewReader(payload), nil); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ErrUnsigned is a tag without an OpenPGP signature.
var ErrUnsigned = errors.New("tag is not signed")

// VerifyTagSignature checks the OpenPGP signature of the annotated tag h
// of r against an armored public keyring and returns the signing key's id.
// The signature must sign the tag as git verify-tag checks it
// (gitstore.Repo.TagSignedPayload).
func VerifyTagSignature(r *gitstore.Repo, h gitstore.Hash, armoredKeyring []byte) (string, error) {
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
	keyring, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(armoredKeyring))
	if err == nil {
		var e *openpgp.Entity
		if e, err = openpgp.CheckArmoredDetachedSignature(keyring, bytes.NewReader(payload), strings.NewReader(t.PGPSignature), nil); err == nil {
			return keyID(e), nil
		}
	}
	return "", fmt.Errorf("tag %s: bad signature: %w", t.Name, err)
}
