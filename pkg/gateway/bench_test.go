package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/gateway"
)

// BenchmarkReadFile is a worker's read_file through the gateway's Unix
// socket: the grant verified per call, the blob read at base_ref, the
// call recorded (bench/run reports it against git cat-file --batch).
func BenchmarkReadFile(b *testing.B) {
	files := map[string]string{}
	var paths []string
	for i := 0; i < 256; i++ {
		p := fmt.Sprintf("pkg%d/file%03d.go", i%8, i)
		files[p] = fmt.Sprintf("package pkg%d\n\n%s", i%8, strings.Repeat("var x = 1 // a line of code\n", 40))
		paths = append(paths, p)
	}
	f := runtest.New(b, runtest.Options{Files: files})
	a := f.Attempt("reader", 1)
	tok := f.Issue(a, runtest.IssueOptions{Caps: []string{"repo.read"}, MaxCalls: 1_000_000_000})
	_, c := f.Serve(a, tok, nil)
	ctx := context.Background()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := c.ReadFile(ctx, gateway.ReadFileRequest{Path: paths[i%len(paths)]}); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}
