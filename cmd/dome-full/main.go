// Command dome-full is dome's whole command set. dome (cmd/dome, the front)
// runs the commands that must start fast itself and hands every other one
// to this program, unchanged; run directly, it is dome with every command.
package main

import (
	"context"
	"os"

	"github.com/dome-registry/dome/internal/app"
	"github.com/dome-registry/dome/internal/front"
)

func main() {
	// The programs dome runs (workers, helpers, dome itself) must not look
	// handed off to.
	os.Unsetenv(front.EnvHandedOff)
	os.Exit(app.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}
