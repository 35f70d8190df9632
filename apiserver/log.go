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

// logRequest writes the request's log line.
func (s *Server) logRequest(rr *responseRecorder, r *http.Request, start time.Time) {
	if s.cfg.Logger == nil {
		return
	}
	code := rr.code
	if code == 0 {
		code = http.StatusOK
	}
	s.cfg.Logger.Printf("%s %s %d %s %q", r.Method, r.URL.RequestURI(), code,
		time.Since(start).Round(time.Microsecond), r.UserAgent())
}
