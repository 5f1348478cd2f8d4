package httpapi

import (
	"net/http"
	"sync"
)

// logWriter records what a handler answered, for the access log.
type logWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	code   string // the error code, "" for a success
	wrote  bool
}

var logWriters = sync.Pool{New: func() any { return new(logWriter) }}

func getLogWriter(w http.ResponseWriter) *logWriter {
	lw := logWriters.Get().(*logWriter)
	*lw = logWriter{ResponseWriter: w, status: http.StatusOK}
	return lw
}

func putLogWriter(lw *logWriter) {
	*lw = logWriter{}
	logWriters.Put(lw)
}

func (lw *logWriter) WriteHeader(status int) {
	if !lw.wrote {
		lw.status, lw.wrote = status, true
	}
	lw.ResponseWriter.WriteHeader(status)
}

func (lw *logWriter) Write(b []byte) (int, error) {
	lw.wrote = true
	n, err := lw.ResponseWriter.Write(b)
	lw.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (lw *logWriter) Unwrap() http.ResponseWriter { return lw.ResponseWriter }
