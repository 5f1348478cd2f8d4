package grantfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dome-registry/dome/pkg/grant"
)

// File names inside the store's folder.
const (
	LogName  = "grants.log"
	lockName = "grants.lock"
)

// compactAt is the log size, in records, from which a commit compacts the
// log when more than half of it has expired.
const compactAt = 10000

// Store is the file store. It is safe for concurrent use, and any number of
// processes may share one folder.
type Store struct {
	dir, logPath string
	lock         *os.File

	mu      sync.RWMutex // guards everything below
	log     *os.File
	ino     uint64
	off     int64 // bytes of complete lines read into the maps
	seen    int64 // the file size at the last read (off plus a partial line, if any)
	records int
	spent   map[[2]string]grant.Spend
	revoked map[[3]string]grant.Revocation
	newest  time.Time // the latest spent_at or revoked_at seen
	closed  bool

	compactAt int // records from which a commit may compact (compactAt; tests lower it)

	qmu      sync.Mutex
	queue    []*pending
	flushing bool
}

type pending struct {
	rec  record
	done chan error
}

var _ grant.Store = (*Store)(nil)

// Open opens (creating it if needed) the store in dir.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("grant store: no folder")
	}
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("grant store %s: not a folder", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("grant store: %w", err)
	}
	lock, err := openNoFollow(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("grant store: %w", err)
	}
	s := &Store{dir: dir, logPath: filepath.Join(dir, LogName), lock: lock, compactAt: compactAt}
	s.reset()
	if err := s.flock(unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, err
	}
	created := false
	if _, err := os.Lstat(s.logPath); errors.Is(err, os.ErrNotExist) {
		created = true
	}
	err = s.reopen()
	if err == nil && created {
		err = syncDir(dir)
	}
	s.funlock()
	if err != nil {
		lock.Close()
		return nil, err
	}
	return s, nil
}

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

func (s *Store) String() string { return "file " + s.logPath }

func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (s *Store) flock(how int) error {
	for {
		err := unix.Flock(int(s.lock.Fd()), how)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("grant store %s: lock: %w", s.dir, err)
		}
	}
}

func (s *Store) funlock() { unix.Flock(int(s.lock.Fd()), unix.LOCK_UN) }

func (s *Store) reset() {
	s.off, s.seen, s.records = 0, 0, 0
	s.spent = map[[2]string]grant.Spend{}
	s.revoked = map[[3]string]grant.Revocation{}
}

// reopen opens the log file afresh and reads it whole (s.mu held or not
// yet shared).
func (s *Store) reopen() error {
	f, err := openNoFollow(s.logPath, os.O_RDWR|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return fmt.Errorf("grant store: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if s.log != nil {
		s.log.Close()
	}
	s.log, s.ino = f, fi.Sys().(*syscall.Stat_t).Ino
	s.reset()
	return s.readNew()
}

// refresh brings the maps up to date with the file (s.mu held).
func (s *Store) refresh() error {
	if s.closed {
		return errors.New("grant store: closed")
	}
	fi, err := os.Lstat(s.logPath)
	if err != nil {
		return fmt.Errorf("grant store: %w", err)
	}
	if fi.Sys().(*syscall.Stat_t).Ino != s.ino {
		return s.reopen()
	}
	if fi.Size() != s.seen {
		return s.readNew()
	}
	return nil
}

// readNew reads the complete lines appended since s.off.
func (s *Store) readNew() error {
	fi, err := s.log.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size < s.off {
		// Only a writer cutting a torn tail shrinks the file, and never
		// below a complete line: a smaller file was replaced under us.
		s.reset()
	}
	if size == s.off {
		s.seen = size
		return nil
	}
	buf := make([]byte, size-s.off)
	if _, err := s.log.ReadAt(buf, s.off); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("grant store: read %s: %w", s.logPath, err)
	}
	end := bytes.LastIndexByte(buf, '\n') + 1
	for line := range bytes.SplitSeq(buf[:end], []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		r, err := parseRecord(line)
		if err != nil {
			return fmt.Errorf("grant store: %s: record %d: %w (the file was changed by something other than dome)", s.logPath, s.records+1, err)
		}
		s.apply(r)
	}
	s.off += int64(end)
	s.seen = size
	return nil
}

func (s *Store) apply(r record) {
	s.records++
	if sp := r.Spend; sp != nil {
		s.spent[[2]string{sp.Issuer, sp.JTI}] = *sp
		if sp.SpentAt.After(s.newest) {
			s.newest = sp.SpentAt
		}
		return
	}
	rv := *r.Revocation
	k := [3]string{rv.Issuer, rv.Kind, rv.Value}
	if old, ok := s.revoked[k]; !ok || rv.Until.After(old.Until) {
		s.revoked[k] = rv
	}
	if rv.RevokedAt.After(s.newest) {
		s.newest = rv.RevokedAt
	}
}

func (s *Store) status(issuer, jti, profileID string) grant.Status {
	var st grant.Status
	if sp, ok := s.spent[[2]string{issuer, jti}]; ok {
		st.Spent = &sp
	}
	var a, b *grant.Revocation
	if r, ok := s.revoked[[3]string{issuer, grant.RevokeJTI, jti}]; ok {
		a = &r
	}
	if r, ok := s.revoked[[3]string{issuer, grant.RevokeProfile, profileID}]; ok {
		b = &r
	}
	st.Revoked = grant.Stronger(a, b)
	return st
}

// Lookup implements grant.Store. It takes no file lock: it reads the
// complete lines other processes appended since the last look.
func (s *Store) Lookup(_ context.Context, issuer, jti, profileID string) (grant.Status, error) {
	fi, err := os.Lstat(s.logPath)
	if err != nil {
		return grant.Status{}, fmt.Errorf("grant store: %w", err)
	}
	s.mu.RLock()
	if !s.closed && fi.Sys().(*syscall.Stat_t).Ino == s.ino && fi.Size() == s.seen {
		st := s.status(issuer, jti, profileID)
		s.mu.RUnlock()
		return st, nil
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return grant.Status{}, err
	}
	return s.status(issuer, jti, profileID), nil
}

// Spend implements grant.Store.
func (s *Store) Spend(ctx context.Context, sp grant.Spend) error {
	if err := sp.Check(); err != nil {
		return err
	}
	sp.SpentAt, sp.ExpiresAt = sp.SpentAt.UTC(), sp.ExpiresAt.UTC()
	return s.submit(ctx, record{Op: "spend", Spend: &sp})
}

// Revoke implements grant.Store.
func (s *Store) Revoke(ctx context.Context, r grant.Revocation) error {
	if err := r.Check(); err != nil {
		return err
	}
	r.Until, r.RevokedAt = r.Until.UTC(), r.RevokedAt.UTC()
	return s.submit(ctx, record{Op: "revoke", Revocation: &r})
}

// submit queues a record and returns once it is durable (or refused).
// The first caller to find no commit running commits every queued record,
// in groups, until the queue is empty.
func (s *Store) submit(ctx context.Context, r record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := &pending{rec: r, done: make(chan error, 1)}
	s.qmu.Lock()
	s.queue = append(s.queue, p)
	if !s.flushing {
		s.flushing = true
		for len(s.queue) > 0 {
			batch := s.queue
			s.queue = nil
			s.qmu.Unlock()
			s.commit(batch)
			s.qmu.Lock()
		}
		s.flushing = false
	}
	s.qmu.Unlock()
	// Once queued a record may be committed: wait for the outcome even if
	// ctx ends, so an acknowledged spend is never reported as failed.
	return <-p.done
}

// commit writes one group: under the exclusive file lock, read what other
// processes appended, decide each record, append the accepted ones in one
// write, sync, then answer.
func (s *Store) commit(batch []*pending) {
	fail := func(err error) {
		for _, p := range batch {
			p.done <- err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.flock(unix.LOCK_EX); err != nil {
		fail(err)
		return
	}
	defer s.funlock()
	if err := s.refresh(); err != nil {
		fail(err)
		return
	}
	if s.seen > s.off {
		// A writer died mid-append: its partial line was never
		// acknowledged. Cut it off before appending after it.
		if err := s.log.Truncate(s.off); err != nil {
			fail(fmt.Errorf("grant store: cut a torn record: %w", err))
			return
		}
		s.seen = s.off
	}
	var buf []byte
	results := make([]error, len(batch))
	var accepted []record
	for i, p := range batch {
		if sp := p.rec.Spend; sp != nil {
			st := s.status(sp.Issuer, sp.JTI, sp.ProfileID)
			switch {
			case st.Revoked != nil && st.Revoked.Until.After(sp.SpentAt):
				results[i] = grant.ErrRevoked
				continue
			case st.Spent != nil:
				results[i] = grant.ErrSpent
				continue
			}
		}
		line, err := p.rec.line()
		if err != nil {
			results[i] = err
			continue
		}
		buf = append(buf, line...)
		s.apply(p.rec) // later records of the group see it
		accepted = append(accepted, p.rec)
	}
	if len(buf) > 0 {
		_, werr := s.log.Write(buf)
		if werr == nil {
			werr = datasync(s.log)
		}
		if werr != nil {
			// What reached the disk is unknown: reread it next time.
			s.ino = 0
			werr = fmt.Errorf("grant store: write %s: %w", s.logPath, werr)
			for i := range results {
				if results[i] == nil {
					results[i] = werr
				}
			}
		} else {
			s.off += int64(len(buf))
			s.seen = s.off
		}
	}
	for i, p := range batch {
		p.done <- results[i]
	}
	if s.ino != 0 && s.records >= s.compactAt {
		live := len(s.spent) + len(s.revoked)
		expired := 0
		for _, sp := range s.spent {
			if sp.ExpiresAt.Before(s.newest) {
				expired++
			}
		}
		if expired*2 > live {
			s.prune(s.newest) // best effort: the records stay valid either way
		}
	}
}

// Prune implements grant.Store.
func (s *Store) Prune(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.flock(unix.LOCK_EX); err != nil {
		return 0, err
	}
	defer s.funlock()
	if err := s.refresh(); err != nil {
		return 0, err
	}
	return s.prune(now)
}

// prune rewrites the log without the entries that expired before now
// (s.mu and the exclusive file lock held, maps fresh).
func (s *Store) prune(now time.Time) (int, error) {
	var buf []byte
	n := 0
	keep := func(r record) error {
		line, err := r.line()
		buf = append(buf, line...)
		return err
	}
	for _, sp := range s.spent {
		if sp.ExpiresAt.Before(now) {
			n++
			continue
		}
		if err := keep(record{Op: "spend", Spend: &sp}); err != nil {
			return 0, err
		}
	}
	for _, rv := range s.revoked {
		if rv.Until.Before(now) {
			n++
			continue
		}
		if err := keep(record{Op: "revoke", Revocation: &rv}); err != nil {
			return 0, err
		}
	}
	if n == 0 && s.records == len(s.spent)+len(s.revoked) {
		return 0, nil
	}
	tmp := s.logPath + ".tmp"
	os.Remove(tmp)
	f, err := openNoFollow(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return 0, fmt.Errorf("grant store: prune: %w", err)
	}
	_, err = f.Write(buf)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.logPath)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("grant store: prune: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		return 0, fmt.Errorf("grant store: prune: %w", err)
	}
	return n, s.reopen()
}

// Close implements grant.Store.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.log.Close()
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	return err
}
