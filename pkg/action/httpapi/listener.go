package httpapi

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Listener wraps ln so that the answers net/http writes by itself, before
// any handler runs, come in the API's error shape {"error": {"code",
// "message"}} with a stable code and Content-Type application/json, like
// every other answer: 431 HEADERS_TOO_LARGE (headers over the server's
// MaxHeaderBytes), 400 BAD_REQUEST (a malformed request line or header, no
// Host or a bad one), 505 HTTP_VERSION_NOT_SUPPORTED, 501 NOT_IMPLEMENTED (a
// transfer coding net/http does not implement) and 417 EXPECTATION_FAILED (an
// Expect other than 100-continue). net/http writes those as plain text
// straight to the connection, so the only place to change them is the
// connection: each is recognized by its exact form (a status line and the
// fixed headers net/http gives them; a handler's JSON answer can never look
// like that, since JSON has no raw CR LF) and rewritten whole. onError, when
// set, is called for each, to log it (the handler's access log never sees
// these requests).
func Listener(ln net.Listener, maxHeaderBytes int, onError func(status int, code, message, remote string)) net.Listener {
	return &protoListener{Listener: ln, maxHeader: maxHeaderBytes, onError: onError}
}

type protoListener struct {
	net.Listener
	maxHeader int
	onError   func(status int, code, message, remote string)
}

func (l *protoListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &protoConn{Conn: c, l: l}, nil
}

type protoConn struct {
	net.Conn
	l *protoListener
}

func (c *protoConn) Write(p []byte) (int, error) {
	status, code, msg, ok := serverError(p, c.l.maxHeader)
	if !ok {
		return c.Conn.Write(p)
	}
	if c.l.onError != nil {
		c.l.onError(status, code, msg, c.RemoteAddr().String())
	}
	body, code := errorJSON(code, msg, nil)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(Status(code)) + " " + http.StatusText(Status(code)) + "\r\n")
	b.WriteString("Content-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	b.Write(body)
	if _, err := c.Conn.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite half-closes the connection when it can, as net/http does after
// a 431 so the client reads the answer before the connection goes.
func (c *protoConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// plainErrorHeaders are the headers net/http gives the errors it writes
// itself (server.go, conn.serve).
const plainErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// serverError recognizes one of net/http's own error answers in p and says
// what the API answers instead.
func serverError(p []byte, maxHeader int) (status int, code, msg string, ok bool) {
	const prefix = "HTTP/1.1 "
	if len(p) < len(prefix)+4 || string(p[:len(prefix)]) != prefix {
		return 0, "", "", false
	}
	end := bytes.Index(p, []byte("\r\n\r\n"))
	if end < 0 {
		return 0, "", "", false
	}
	status, err := strconv.Atoi(string(p[len(prefix) : len(prefix)+3]))
	if err != nil {
		return 0, "", "", false
	}
	head := string(p[:end+4])
	if status == http.StatusExpectationFailed {
		// Written through the response writer: a status line and
		// Connection: close, Date and Content-Length: 0.
		if strings.Contains(head, "\r\nConnection: close\r\n") && strings.HasSuffix(head, "\r\nContent-Length: 0\r\n\r\n") {
			return status, CodeExpectationFailed, "the server meets no Expect header but 100-continue", true
		}
		return 0, "", "", false
	}
	if !strings.HasSuffix(head, plainErrorHeaders) {
		return 0, "", "", false
	}
	// The body is "<status> <text>[: <detail>]" or, for 501, a sentence.
	detail := string(p[end+4:])
	if _, after, found := strings.Cut(detail, ": "); found {
		detail = after
	} else {
		detail = ""
	}
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		msg = "the request headers are over the server's limit"
		if maxHeader > 0 {
			msg += " of " + strconv.Itoa(maxHeader) + " bytes"
		}
		return status, CodeHeadersTooLarge, msg, true
	case http.StatusHTTPVersionNotSupported:
		return status, CodeHTTPVersionNotSupported, "unsupported protocol version: the server speaks HTTP/1.0 and HTTP/1.1", true
	case http.StatusNotImplemented:
		return status, CodeNotImplemented, "unsupported transfer encoding: the server reads chunked bodies or a Content-Length", true
	case http.StatusBadRequest:
		msg = "malformed request"
		if detail != "" {
			msg += ": " + detail
		}
		return status, CodeBadRequest, msg, true
	}
	if status >= 500 {
		return status, CodeInternal, "the server could not read the request", true
	}
	return status, CodeBadRequest, "the server could not read the request", true
}
