//go:build !linux

package gitstore

import (
	"context"
	"errors"
	"fmt"
)

// WatchRef is implemented with inotify on Linux only; elsewhere it returns
// an error at once and callers read the ref on every use.
func (r *Repo) WatchRef(ctx context.Context, name string, ready func(bool), changed func()) error {
	return fmt.Errorf("watch %s: %w", name, errors.ErrUnsupported)
}
