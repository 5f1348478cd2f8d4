package codegen_test

import (
	"context"
	"testing"

	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/registry"
)

// BenchmarkGenerateAll_Example generates the example registry's 45 clients
// (specs loaded and filtered once per Generator, as dome gen --all does).
func BenchmarkGenerateAll_Example(b *testing.B) {
	r := exampleRepo(b)
	for i := 0; i < b.N; i++ {
		g := openGen(b, r.Dir)
		p, err := g.Reg.PinRev(context.Background(), "", "HEAD", registry.PinOptions{})
		if err != nil {
			b.Fatal(err)
		}
		jobs, _, err := g.PlanAll(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.GenerateAll(context.Background(), jobs, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender_Go measures one oapi-codegen run plus formatting and the
// manifest on a filtered spec (petstore, default profile).
func BenchmarkRender_Go(b *testing.B) {
	r := exampleRepo(b)
	g := openGen(b, r.Dir)
	clients := generateAll(b, g)
	var c *codegen.Client
	for _, x := range clients {
		if x.Key() == "go/petstore/default" {
			c = x
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := codegen.Render(codegen.RenderInput{ToolID: "petstore", ProfileID: "default", Bundle: c.Bundle, SDKFlavor: "go-client", Options: map[string]any{"package": ""}, Filtered: c.Filtered}); err != nil {
			b.Fatal(err)
		}
	}
}
