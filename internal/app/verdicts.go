package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/internal/buildinfo"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/specfilter"
)

// verdictDir holds the verdicts of one dome build: an empty file named by
// the hex sha256 of a filtered spec that passed validation. Validation is a
// function of the validated bytes and of the validator only, and the
// directory's name is a digest of the build (version, commit, and the
// executable's path, size and modification time, so that any rebuild starts
// empty), so a file there can only say what this very build said about these
// very bytes. Only "valid" is remembered: a spec that fails is validated again
// to report its problems. The cache lives under $XDG_CACHE_HOME/dome/verdicts
// (~/.cache/dome/verdicts); DOME_VERDICT_CACHE=off turns it off, and removing
// the folder forgets everything.
type verdictDir struct {
	dir string
}

// verdictCache returns the verdict cache of this build, or nil when it is
// turned off or the build cannot be named.
func verdictCache(env *Env) specfilter.VerdictCache {
	if v := strings.ToLower(env.Getenv("DOME_VERDICT_CACHE")); v == "off" || v == "0" || v == "false" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	st, err := os.Stat(exe)
	if err != nil {
		return nil
	}
	bi := buildinfo.Read()
	id := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%v\x00%s\x00%d\x00%d", bi.Version, bi.Commit, bi.Modified, exe, st.Size(), st.ModTime().UnixNano()))
	return &verdictDir{dir: filepath.Join(cacheDir(env), "verdicts", hex.EncodeToString(id[:12]))}
}

func (v *verdictDir) path(digest string) (string, bool) {
	sum, err := canonical.ParseDigest(digest)
	if err != nil {
		return "", false
	}
	return filepath.Join(v.dir, hex.EncodeToString(sum)), true
}

// Valid reports a remembered positive verdict.
func (v *verdictDir) Valid(digest string) bool {
	p, ok := v.path(digest)
	if !ok {
		return false
	}
	st, err := os.Lstat(p)
	return err == nil && st.Mode().IsRegular()
}

// RememberValid records a positive verdict; a failure to write only costs
// the next run a validation.
func (v *verdictDir) RememberValid(digest string) {
	p, ok := v.path(digest)
	if !ok {
		return
	}
	if err := os.MkdirAll(v.dir, 0o755); err != nil {
		return
	}
	if f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
		f.Close()
	}
}
