// Command dome turns a git repository into a trustworthy tool registry.
package main

import (
	"context"
	"os"

	"github.com/dome-registry/dome/cmd/dome/internal/app"
)

func main() { os.Exit(app.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr)) }
