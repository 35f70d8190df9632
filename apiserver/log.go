package apiserver

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"time"
)

// The request log: one line per request, like kube-apiserver's httplog at
// -v=3: method, path and query, status code, duration and user agent.
//
//	GET /api/v1/namespaces/default/configmaps?watch=1 200 30.002s "kubectl/v1.32.4 (linux/amd64)"
//
// A watch is logged when it ends, so its duration is how long it lasted.

// responseRecorder remembers the status code for the log. It passes
// Flush and Hijack through (watches flush each event; a websocket upgrade
// hijacks the connection) and unwraps for http.ResponseController.
type responseRecorder struct {
	http.ResponseWriter
	code     int
	hijacked bool
	// start is when the request arrived, for the duration in the log.
	start time.Time
	// detached is set when the request goes on after its handler (an
	// HTTP/1.1 watch, see Server.detach): its goroutine writes the log
	// line when it ends.
	detached bool
}

func (rr *responseRecorder) WriteHeader(code int) {
	if rr.code == 0 {
		rr.code = code
	}
	rr.ResponseWriter.WriteHeader(code)
}

func (rr *responseRecorder) Write(b []byte) (int, error) {
	if rr.code == 0 {
		rr.code = http.StatusOK
	}
	return rr.ResponseWriter.Write(b)
}

// Flush sends buffered data to the client.
func (rr *responseRecorder) Flush() {
	if rr.code == 0 {
		rr.code = http.StatusOK
	}
	if f, ok := rr.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over, for a websocket upgrade.
func (rr *responseRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := rr.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("apiserver: the connection cannot be hijacked")
	}
	conn, rw, err := h.Hijack()
	if err == nil {
		rr.hijacked = true
		if rr.code == 0 {
			rr.code = http.StatusSwitchingProtocols
		}
	}
	return conn, rw, err
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (rr *responseRecorder) Unwrap() http.ResponseWriter { return rr.ResponseWriter }

// logRequest writes the request's log line, unless the request was
// detached from its handler (its goroutine logs it when it ends).
func (s *Server) logRequest(rr *responseRecorder, r *http.Request) {
	if s.cfg.Logger == nil || rr.detached {
		return
	}
	s.logLine(r.Method, r.URL.RequestURI(), rr.code, rr.start, r.UserAgent())
}

// logLine writes one request log line.
func (s *Server) logLine(method, uri string, code int, start time.Time, userAgent string) {
	if code == 0 {
		code = http.StatusOK
	}
	s.cfg.Logger.Printf("%s %s %d %s %q", method, uri, code,
		time.Since(start).Round(time.Microsecond), userAgent)
}

// recorderOf finds the responseRecorder under w, or nil.
func recorderOf(w http.ResponseWriter) *responseRecorder {
	for {
		switch rw := w.(type) {
		case *responseRecorder:
			return rw
		case interface{ Unwrap() http.ResponseWriter }:
			w = rw.Unwrap()
		default:
			return nil
		}
	}
}
