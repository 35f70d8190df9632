package filters

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"listwatch/api"
)

// The limits that keep one client from hurting the server (docs/limits.md): a body
// size limit and deadlines on reading a body and writing a response.
// (Strict decoding of what a body claims to be is package negotiation's.)

// MaxRequestBodyBytes is the largest request body accepted (Kubernetes'
// default is 3 MiB); a larger one gets 413.
const MaxRequestBodyBytes = 3 << 20

// BodyReadTimeout bounds reading a request body, so a client that sends
// half a body and stalls cannot hold a handler forever.
const BodyReadTimeout = time.Minute

// ResponseWriteTimeout bounds writing an ordinary (non-watch) response to a
// client that does not read it, from the response's first byte (see
// WriteDeadline).
const ResponseWriteTimeout = time.Minute

// WriteDeadline returns w with a write deadline that starts when the
// response does: timeout after its header or first byte is written, not
// after the request arrived. So the time a handler takes to work out its
// answer (a large patch on a busy machine) never counts against it, and
// the answer always goes out; only a client that does not read it is cut
// off. done clears the deadline, which is the connection's: the next
// request on a kept-alive connection may be a long watch.
//
// kube-apiserver sets no write deadline on its connections; it bounds a
// whole non-watch request instead, by --request-timeout (60 s), after
// which the client gets 504 Timeout (k8s.io/apiserver
// pkg/server/filters/timeout.go, WithTimeoutForNonLongRunningRequests).
func WriteDeadline(w http.ResponseWriter, timeout time.Duration) (dw http.ResponseWriter, done func()) {
	d := &deadlineWriter{ResponseWriter: w, timeout: timeout}
	return d, func() {
		if d.started {
			_ = http.NewResponseController(d.ResponseWriter).SetWriteDeadline(time.Time{})
		}
	}
}

// deadlineWriter starts its write deadline at the first write.
type deadlineWriter struct {
	http.ResponseWriter
	timeout time.Duration
	started bool
}

func (d *deadlineWriter) start() {
	if d.started {
		return
	}
	d.started = true
	// Best effort, as in ReadBody: a test's recorder has no deadlines.
	_ = http.NewResponseController(d.ResponseWriter).SetWriteDeadline(time.Now().Add(d.timeout))
}

// WriteHeader starts the deadline, then writes the header.
func (d *deadlineWriter) WriteHeader(code int) {
	d.start()
	d.ResponseWriter.WriteHeader(code)
}

// Write starts the deadline, then writes b.
func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.start()
	return d.ResponseWriter.Write(b)
}

// Flush starts the deadline, then flushes.
func (d *deadlineWriter) Flush() {
	d.start()
	_ = http.NewResponseController(d.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// ReadBody reads the request body, at most MaxRequestBodyBytes of it; a
// larger body is 413 RequestEntityTooLarge, as Kubernetes answers.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	tooLarge := api.NewRequestEntityTooLarge(fmt.Sprintf("limit is %d", MaxRequestBodyBytes))
	if r.ContentLength > MaxRequestBodyBytes {
		return nil, tooLarge
	}
	rc := http.NewResponseController(w)
	// Deadlines are best effort: a ResponseWriter that cannot set them
	// (a test's recorder) still reads the body.
	_ = rc.SetReadDeadline(time.Now().Add(BodyReadTimeout))
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBodyBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge
	case err != nil:
		return nil, api.NewBadRequest(fmt.Sprintf("unable to read the request body: %v", err))
	}
	return body, nil
}
