package app

import (
	"strconv"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
)

// createdAt returns the timestamp an artifact records: --created-at
// (RFC 3339), else SOURCE_DATE_EPOCH (seconds), else the clock. Pinning it
// makes outputs byte-identical across runs.
func createdAt(env *Env, flag string) (time.Time, error) {
	if flag != "" {
		t, err := time.Parse(time.RFC3339, flag)
		if err != nil {
			return time.Time{}, &errkind.InputError{Source: "--created-at", Problem: err.Error(), Hint: "write an RFC 3339 time, e.g. 2026-01-02T03:04:05Z"}
		}
		return t.UTC(), nil
	}
	if s := env.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return time.Time{}, &errkind.InputError{Source: "SOURCE_DATE_EPOCH", Problem: "not a number of seconds: " + s, Hint: "set it to a Unix time, e.g. $(git log -1 --format=%ct)"}
		}
		return time.Unix(n, 0).UTC(), nil
	}
	return env.Now().UTC().Truncate(time.Second), nil
}
