// Command dome-openai is dome's OpenAI-compatible model provider: dome runs
// it for agent runtimes of kind openai. Install it beside dome (the release
// archive ships it; or go install
// github.com/dome-registry/dome/cmd/dome-openai@VERSION).
package main

import (
	"context"
	"os"

	"github.com/dome-registry/dome/internal/domeopenai"
)

func main() {
	os.Exit(domeopenai.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
