//go:build linux

package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WatchRef reports every change to the ref name (a branch or tag) as it
// happens, by any process: git and dome move a loose ref by renaming a lock
// file onto it, `git pack-refs` rewrites packed-refs and deletes the loose
// file, and each of these is an inotify event on the ref's folder or on the
// repository's common folder. ready(true) is called once the watch is in
// place (a change before it is not reported: read the ref after ready);
// ready(false) when it ends or may have missed events (a queue overflow
// counts as a change; the folder itself going away ends the watch with an
// error). It returns when ctx ends (nil) or the watch fails.
//
// Objects are content-addressed and never rewritten in place, so a change
// of what the ref names is a change of the ref; a loose object overwritten
// by hand is corruption for `git fsck`, not a ref change.
func (r *Repo) WatchRef(ctx context.Context, name string, ready func(bool), changed func()) error {
	if err := CheckRefName(name); err != nil {
		return err
	}
	refPath := r.refFile(name)
	dir, base := filepath.Dir(refPath), filepath.Base(refPath)
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("watch %s: inotify: %w", name, err)
	}
	// A non-blocking descriptor in an *os.File goes through Go's poller:
	// Read parks the goroutine and Close wakes it.
	f := os.NewFile(uintptr(fd), "inotify")
	defer f.Close()
	const mask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_CLOSE_WRITE |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	refWD, err := unix.InotifyAddWatch(fd, dir, mask)
	if err != nil {
		return fmt.Errorf("watch %s: %s: %w", name, dir, err)
	}
	commonWD := refWD
	if dir != r.commonDir {
		if commonWD, err = unix.InotifyAddWatch(fd, r.commonDir, mask); err != nil {
			return fmt.Errorf("watch %s: %s: %w", name, r.commonDir, err)
		}
	}
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	ready(true)
	defer ready(false)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch %s: read events: %w", name, err)
		}
		hit := false
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			evName := string(bytes.TrimRight(nameBytes, "\x00"))
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				hit = true
			case ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0:
				if hit {
					changed()
				}
				return fmt.Errorf("watch %s: %w", name, errWatchedDirGone)
			case int(ev.Wd) == refWD && evName == base:
				hit = true
			case int(ev.Wd) == commonWD && evName == "packed-refs":
				hit = true
			}
		}
		if hit {
			changed()
		}
	}
}

var errWatchedDirGone = errors.New("a watched folder was removed or moved")
