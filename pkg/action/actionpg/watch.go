package actionpg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// NotifyChannel is the channel migration 0002 notifies on every committed
// change of action_versions (payload "<name>@<version>", "*" for a TRUNCATE).
const NotifyChannel = "dome_action_versions"

// Watch reports changes to stored versions as they commit, from whichever
// process or person makes them: it LISTENs on NotifyChannel on a connection
// of its own (not one of the pool's) and calls changed(payload) for each
// notification. It calls ready(true) once it listens, and ready(false) when
// the connection is lost (notifications may have been missed meanwhile: a
// cache must drop everything and read the store until ready(true) again);
// then it reconnects with backoff (100 ms doubling to 5 s). It returns when
// ctx ends. The callbacks run on Watch's goroutine and must not block.
func (s *Store) Watch(ctx context.Context, ready func(bool), changed func(payload string)) error {
	backoff := 100 * time.Millisecond
	for {
		err := s.listen(ctx, ready, changed)
		if ctx.Err() != nil {
			return nil
		}
		_ = err // the connection is gone; a caller that cares watches ready(false)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		if backoff *= 2; backoff > 5*time.Second {
			backoff = 5 * time.Second
		}
	}
}

// listen runs one LISTEN session until it fails or ctx ends.
func (s *Store) listen(ctx context.Context, ready func(bool), changed func(string)) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("postgres: watch: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{NotifyChannel}.Sanitize()); err != nil {
		return fmt.Errorf("postgres: watch: listen: %w", err)
	}
	ready(true)
	defer ready(false)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil
			}
			return fmt.Errorf("postgres: watch: %w", err)
		}
		changed(n.Payload)
	}
}
