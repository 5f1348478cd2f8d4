package storetest_test

import (
	"testing"

	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/grant/storetest"
)

// The reference store passes its own suite (a MemStore is shared by every
// handle of one opener).
func TestMemStore(t *testing.T) {
	storetest.Run(t, func(t testing.TB) storetest.Opener {
		m := storetest.NewMemStore()
		return func(testing.TB) grant.Store { return m }
	})
}
