package actiongit

import (
	"context"
	"time"
)

// Watch reports every move of the store's branch, by any process (a
// publish, a hand-made commit, pack-refs), as it happens: inotify on the
// ref (gitstore.WatchRef). It makes `dome serve` answer reads from memory
// until the branch moves, as the PostgreSQL store's LISTEN/NOTIFY feed does.
// A watch that cannot start or fails (the branch's folder does not exist
// yet, a platform without inotify) is retried with a growing pause of up to
// 5 s; in between ready(false) holds and readers go to the store. It
// returns when ctx ends.
func (s *Store) Watch(ctx context.Context, ready func(bool), changed func(what string)) error {
	backoff := 100 * time.Millisecond
	for {
		start := time.Now()
		_ = s.repo.WatchRef(ctx, s.branch, ready, func() { changed(s.branch) })
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) > time.Minute {
			backoff = 100 * time.Millisecond // it ran for a while: start over
		}
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
