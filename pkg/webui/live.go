package webui

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"
)

// liveMessage is the data of a "ledger" server-sent event.
type liveMessage struct {
	Sequence int64    `json:"sequence"`
	Topics   []string `json:"topics"` // of the new events, at most maxTopics
	URL      string   `json:"url"`    // the stable page of the new state
	Ended    bool     `json:"ended"`
}

const maxTopics = 32

// runLive streams a run's new ledger events as server-sent events: an
// event "ledger" (id: the sequence) whenever events were appended, and
// "end" when the run has ended, after which the stream closes. A client
// that reconnects sends Last-Event-ID and misses nothing. Streams are
// bounded (Options.MaxStreams); the page works without them.
func (h *Handler) runLive(w http.ResponseWriter, r *http.Request) {
	l, ok := h.runLayout(w, r)
	if !ok {
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			after = n
		}
	}
	select {
	case h.streams <- struct{}{}:
		defer func() { <-h.streams }()
	default:
		w.Header().Set("Retry-After", "30")
		h.errorPage(w, r, http.StatusServiceUnavailable, "Too many live pages", "The server follows too many runs at once; reload later.")
		return
	}
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(s string) bool {
		rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("retry: 2000\n\n") {
		return
	}
	poll := time.NewTicker(h.opts.Poll)
	defer poll.Stop()
	idle := time.Now()
	for {
		rl := h.runs.get(l)
		rl.mu.Lock()
		err := rl.refresh()
		latest := int64(len(rl.events))
		var topics []string
		if latest > after {
			from := after
			if latest-from > maxTopics {
				from = latest - maxTopics
			}
			for _, e := range rl.events[from:latest] {
				topics = append(topics, e.Topic)
			}
		}
		ended := rl.foldErr == nil && rl.state.Promoted != nil
		rl.mu.Unlock()
		if err != nil {
			b, _ := json.Marshal(map[string]string{"error": err.Error()})
			send("event: error\ndata: " + string(b) + "\n\n")
			return
		}
		if latest > after {
			b, _ := json.Marshal(liveMessage{Sequence: latest, Topics: topics, URL: runAtURL(l.RunID, latest), Ended: ended})
			if !send("id: " + strconv.FormatInt(latest, 10) + "\nevent: ledger\ndata: " + string(b) + "\n\n") {
				return
			}
			after, idle = latest, time.Now()
		}
		if ended {
			b, _ := json.Marshal(liveMessage{Sequence: latest, URL: runAtURL(l.RunID, latest), Ended: true})
			send("event: end\ndata: " + string(b) + "\n\n")
			return
		}
		if time.Since(idle) >= h.opts.Heartbeat {
			if !send(": keep-alive\n\n") {
				return
			}
			idle = time.Now()
		}
		select {
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		case <-poll.C:
		}
	}
}
