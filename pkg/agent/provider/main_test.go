package provider_test

import (
	"testing"

	"github.com/dome-registry/dome/internal/domeopenai"
	"github.com/dome-registry/dome/internal/helpertest"
)

// TestMain: the openai kind's tests run the real dome-openai (this test
// binary started under that name).
func TestMain(m *testing.M) {
	helpertest.Main(m, map[string]func() int{domeopenai.Name: helpertest.OpenAI})
}
