package storetest

import (
	"testing"

	"github.com/dome-registry/dome/pkg/action"
)

func TestSuiteAgainstMemoryStore(t *testing.T) {
	Run(t, func(t *testing.T) action.Store { return NewMemStore() })
}
