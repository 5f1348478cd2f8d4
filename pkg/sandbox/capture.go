package sandbox

import (
	"os"
	"sort"
	"time"
)

// capture keeps the first max bytes a pipe delivers and counts the rest;
// the first byte over max signals flood (once), so the run can be killed.
type capture struct {
	r     *os.File
	done  chan struct{}
	buf   []byte
	total int64
}

func newCapture(r *os.File, max int64, flood chan<- struct{}) *capture {
	c := &capture{r: r, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		chunk := make([]byte, 32<<10)
		signalled := false
		for {
			n, err := r.Read(chunk)
			if n > 0 {
				if room := max - int64(len(c.buf)); room > 0 {
					c.buf = append(c.buf, chunk[:min(int64(n), room)]...)
				}
				c.total += int64(n)
				if c.total > max && !signalled {
					signalled = true
					select {
					case flood <- struct{}{}:
					default:
					}
				}
			}
			if err != nil {
				return // EOF, or the pipe closed after a kill: what was read stands
			}
		}
	}()
	return c
}

// wait returns what was kept and the total once the pipe closes: the
// sandbox is gone, so that is soon; a descendant that escaped the kill
// cannot hold it open for more than a few seconds.
func (c *capture) wait() ([]byte, int64) {
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.r.Close()
		<-c.done
	}
	c.r.Close()
	return c.buf, c.total
}

func sortedKeys(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}
