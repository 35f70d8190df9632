package apiserver

// CONTRACT FILE (owned by the watch-cache work): how the REST layer hands a
// parsed, validated watch request to the code that writes it on the wire.

import (
	"net/http"
	"time"

	"listwatch/apiserver/cacher"
	"listwatch/narrate"
)

// watchStream is everything serveWatch needs to write one watch response.
type watchStream struct {
	watcher *cacher.CacheWatcher
	// timeout ends the response cleanly (the client sees EOF) once it passes:
	// ?timeoutSeconds exactly, or the server's randomised default.
	timeout time.Duration
	// stall is closed by the half-open fault: from then on the writer stops
	// writing but keeps the connection open until the client goes away.
	stall <-chan struct{}
	// ws is true when the request asked for a websocket upgrade.
	ws     bool
	tracer *narrate.Tracer
}

// serveWatch writes the watch response: 200, Content-Type application/json,
// chunked (headers flushed before the first event), one frame per event,
// flushed when nothing more is pending; or the same frames as websocket text
// messages. It returns when the watch ends (timeout, watcher ended, client
// gone, server stopping). A watcher ended with cacher.ErrKilled makes it drop
// the connection abruptly (no clean end of stream).
func serveWatch(w http.ResponseWriter, r *http.Request, ws watchStream) {
	http.Error(w, "watch not implemented yet", http.StatusNotImplemented)
}
