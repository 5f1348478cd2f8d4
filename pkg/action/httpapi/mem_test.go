package httpapi_test

import (
	"testing"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/storetest"
	"github.com/dome-registry/dome/pkg/signing"
)

// memStore is storetest's in-memory action.Store; the acceptance suite also
// runs against the git and PostgreSQL stores.
type memStore = storetest.MemStore

func newMemStore() *memStore { return storetest.NewMemStore() }

func memKit() storeKit {
	return storeKit{
		open: func(t testing.TB) action.Store { return newMemStore() },
		tamper: func(t testing.TB, s action.Store, name, version string, edit func([]byte) []byte) {
			if err := s.(*memStore).Tamper(name, version, edit); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestAPI_MemStore(t *testing.T) { runSuite(t, memKit()) }

func newKeys(keys ...signing.PrivateKey) (*signing.TrustedKeys, error) {
	var pubs []signing.PublicKey
	for _, k := range keys {
		pubs = append(pubs, k.Public())
	}
	return signing.NewTrustedKeys(pubs...)
}
