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
// client that does not read it.
const ResponseWriteTimeout = time.Minute

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
