package grantstoretest_test

import (
	"testing"

	"github.com/dome-registry/dome/internal/grantstoretest"
	"github.com/dome-registry/dome/pkg/grant"
)

// The reference store passes its own suite (a MemStore is shared by every
// handle of one opener).
func TestMemStore(t *testing.T) {
	grantstoretest.Run(t, func(t testing.TB) grantstoretest.Opener {
		m := grantstoretest.NewMemStore()
		return func(testing.TB) grant.Store { return m }
	})
}
