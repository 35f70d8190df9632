package filters

import (
	"bufio"
	"errors"
	"log"
	"net"
	"net/http"
	"time"

	"listwatch/apiserver/metrics"
)

// The request log: one line per request, like kube-apiserver's httplog at
// -v=3: method, path and query, status code, duration and user agent.
//
//	GET /api/v1/namespaces/default/configmaps?watch=1 200 30.002s "kubectl/v1.32.4 (linux/amd64)"
//
// A watch is logged when it ends, so its duration is how long it lasted.

// Recorder remembers the status code for the log. It passes Flush and
// Hijack through (watches flush each event; a websocket upgrade hijacks the
// connection) and unwraps for http.ResponseController.
type Recorder struct {
	http.ResponseWriter
	// Code is the response's status code; 0 until one is written.
	Code int
	// Hijacked: the connection was taken over from net/http.
	Hijacked bool
	// Start is when the request arrived, for the duration in the log.
	Start time.Time
	// Detached is set when the request goes on after its handler (an
	// HTTP/1.1 watch, see apiserver's Server.detach): its goroutine writes
	// the log line when it ends.
	Detached bool
	// Release gives back the request's slot in the in-flight limits
	// (InFlight.Begin): when the handler returns, or for a detached
	// request when its goroutine ends. nil if it holds none.
	Release func()
	// Metrics is what the request counts as in /metrics, once routed to a
	// resource; the zero value is not counted.
	Metrics metrics.Request
}

// NewRecorder wraps w for a request that arrived now.
func NewRecorder(w http.ResponseWriter) *Recorder {
	return &Recorder{ResponseWriter: w, Start: time.Now()}
}

// WriteHeader records code and writes it.
func (rr *Recorder) WriteHeader(code int) {
	if rr.Code == 0 {
		rr.Code = code
	}
	rr.ResponseWriter.WriteHeader(code)
}

// Write records a 200 if no code was written yet.
func (rr *Recorder) Write(b []byte) (int, error) {
	if rr.Code == 0 {
		rr.Code = http.StatusOK
	}
	return rr.ResponseWriter.Write(b)
}

// Flush sends buffered data to the client.
func (rr *Recorder) Flush() {
	if rr.Code == 0 {
		rr.Code = http.StatusOK
	}
	if f, ok := rr.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over, for a websocket upgrade.
func (rr *Recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := rr.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("apiserver: the connection cannot be hijacked")
	}
	conn, rw, err := h.Hijack()
	if err == nil {
		rr.Hijacked = true
		if rr.Code == 0 {
			rr.Code = http.StatusSwitchingProtocols
		}
	}
	return conn, rw, err
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (rr *Recorder) Unwrap() http.ResponseWriter { return rr.ResponseWriter }

// LogLine writes one request log line to l: method, path and query,
// status code, duration since start and user agent.
func LogLine(l *log.Logger, method, uri string, code int, start time.Time, userAgent string) {
	if code == 0 {
		code = http.StatusOK
	}
	l.Printf("%s %s %d %s %q", method, uri, code, time.Since(start).Round(time.Microsecond), userAgent)
}

// RecorderOf finds the Recorder under w, or nil.
func RecorderOf(w http.ResponseWriter) *Recorder {
	for {
		switch rw := w.(type) {
		case *Recorder:
			return rw
		case interface{ Unwrap() http.ResponseWriter }:
			w = rw.Unwrap()
		default:
			return nil
		}
	}
}

// LogStatus tells the request log which status the response has when
// net/http no longer sees it (a hijacked connection).
func LogStatus(w http.ResponseWriter, code int) {
	if rr := RecorderOf(w); rr != nil && rr.Code == 0 {
		rr.Code = code
	}
}
