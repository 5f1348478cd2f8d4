// Command pgcluster starts a throwaway PostgreSQL cluster (internal/pgtest)
// for scripts such as benchmarks: it prints DATABASE_URL=<url of a fresh
// database> on stdout, then runs until SIGINT or SIGTERM and removes the
// cluster (the server also stops if pgcluster is killed). Exit 3 when no
// server binaries are installed.
//
//	go build -o /tmp/pgcluster ./internal/pgtest/pgcluster
//	/tmp/pgcluster > url.env & pid=$!; trap 'kill $pid' EXIT
//	until [ -s url.env ]; do sleep 0.1; done; . ./url.env; export DATABASE_URL
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dome-registry/dome/internal/pgtest"
)

func main() { os.Exit(run()) }

func run() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c, err := pgtest.Start(ctx)
	if err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, "pgcluster:", err)
		if errors.Is(err, pgtest.ErrNoServer) {
			return 3
		}
		return 1
	}
	defer c.Close()
	url, _, err := c.CreateDatabase(ctx, "dome")
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgcluster:", err)
		return 1
	}
	fmt.Printf("DATABASE_URL=%s\n", url)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	return 0
}
