package actionpg_test

import (
	"testing"

	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

// The PostgreSQL store passes the store conformance suite, each subtest on a
// fresh database of the throwaway cluster.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) action.Store {
		return open(t, pgtest.NewDatabase(t))
	})
}
