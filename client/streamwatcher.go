package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"listwatch/api"
	"listwatch/narrate"
)

// StreamWatcher turns an open watch response into a Watcher: one goroutine
// reads events off the body and sends them on ResultChan. It mirrors
// client-go's watch.StreamWatcher (apimachinery/pkg/watch/streamwatcher.go)
// and behaves the same way.
//
// Why ResultChan closes after about half an hour. A watch is one HTTP
// response that the server keeps open, and the server always ends it: after
// ?timeoutSeconds, or, when the client sets none, after a random 30 to 60
// minutes (kube-apiserver's --min-request-timeout is 1800 s), and also when
// it restarts or a proxy in between gives up. The body then ends: a clean
// EOF, or an error such as "connection reset by peer". Neither is a problem
// with the data, so StreamWatcher reports nothing: it just closes
// ResultChan. That closed channel is the only signal, and it is the whole
// of the first article's bug (docs/articles.md; its starting point is
// https://stackoverflow.com/questions/51399407): a `for { select { case e
// := <-w.ResultChan() ... } }` loop that ignores the second value of the
// receive gets zero events forever once the channel is closed, and a loop
// that `continue`s on !ok spins at full speed. The fix is to watch again
// from the last resourceVersion seen, which RetryWatcher does for you (and
// the Reflector, one layer up, re-lists when even that is not possible).
//
// The rules, as in client-go:
//   - ResultChan is unbuffered: an event is handed over only when the
//     consumer takes it, so a slow consumer slows the reading (TCP flow
//     control then slows the server) instead of memory growing. A consumer
//     that wants a buffer can add one; one that does not could not remove
//     it.
//   - A clean end of stream, or an error IsProbableEOF recognises (reset,
//     broken pipe, unexpected EOF, a closed connection, HTTP/2 GOAWAY), or
//     a timeout, closes ResultChan silently.
//   - Any other failure to decode (garbage, an event over the size limit)
//     is first delivered as one ERROR event carrying a 500 InternalError
//     Status whose message quotes "unable to decode an event from the
//     watch stream: ...", then ResultChan closes. Nothing more can be read after a bad frame: the
//     stream has no way to resynchronise.
//   - An ERROR event the server sends (410 Expired, say) is delivered as it
//     is; the server ends the stream after it.
//   - Stop is idempotent and safe from any goroutine. It closes the body,
//     which unblocks the read, and the goroutine then closes ResultChan.
type StreamWatcher struct {
	body    io.Closer
	dec     *EventDecoder
	result  chan api.Event
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
	tr      *narrate.Tracer
}

// NewStreamWatcher starts reading events from body, which it owns from now
// on: it is closed when the watch ends or Stop is called. tr narrates each
// event (nil is silent).
func NewStreamWatcher(body io.ReadCloser, tr *narrate.Tracer) *StreamWatcher {
	return newStreamWatcher(body, MaxEventBytes, tr)
}

func newStreamWatcher(body io.ReadCloser, maxEventBytes int, tr *narrate.Tracer) *StreamWatcher {
	w := &StreamWatcher{
		body:    body,
		dec:     NewEventDecoder(body, maxEventBytes),
		result:  make(chan api.Event),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
		tr:      tr,
	}
	go w.receive()
	return w
}

// ResultChan delivers the events; it is closed when the watch ends.
func (w *StreamWatcher) ResultChan() <-chan api.Event { return w.result }

// Stop ends the watch: it closes the body, which unblocks the reading
// goroutine, and waits for that goroutine to close ResultChan. Once Stop
// has returned no event is delivered: the goroutine may have been one
// select away from a send that a concurrent receive would have taken.
func (w *StreamWatcher) Stop() {
	w.stop()
	<-w.stopped
}

// stop is Stop without the wait, for the reading goroutine itself.
func (w *StreamWatcher) stop() {
	w.once.Do(func() {
		close(w.done)
		_ = w.body.Close()
	})
}

// Done is closed once the reading goroutine has exited and ResultChan is
// closed, whether the stream ended or Stop was called.
func (w *StreamWatcher) Done() <-chan struct{} { return w.stopped }

func (w *StreamWatcher) receive() {
	defer close(w.stopped)
	defer close(w.result)
	defer w.stop()
	for {
		ev, err := w.dec.Decode()
		if err != nil {
			w.finish(err)
			return
		}
		if w.tr.Enabled() {
			w.tr.Printf(narrate.StreamWatcher, "%s", describe(ev))
		}
		// Once Stop has returned no event may be delivered; a select with
		// both cases ready picks at random, so look at done first.
		select {
		case <-w.done:
			return
		default:
		}
		select {
		case w.result <- ev:
		case <-w.done:
			return
		}
	}
}

// finish decides how a stream that could not give another event ends.
func (w *StreamWatcher) finish(err error) {
	select {
	case <-w.done:
		// Stop closed the body under the reader; whatever it returned is
		// a consequence, not news.
		w.tr.Printf(narrate.StreamWatcher, "stopped: closing ResultChan")
		return
	default:
	}
	if endsQuietly(err) {
		w.tr.Printf(narrate.StreamWatcher, "stream ended (%v): closing ResultChan, watch again from the last resourceVersion", err)
		return
	}
	status := decodeErrorStatus(err)
	w.tr.Printf(narrate.StreamWatcher, "ERROR %s, then closing ResultChan", status.Message)
	select {
	case w.result <- api.Event{Type: api.Error, Status: status}:
	case <-w.done:
	}
}

// causeClientWatchDecoding marks the Status of a stream we could not
// decode, as client-go's watch error reporter does.
const causeClientWatchDecoding api.CauseType = "ClientWatchDecoding"

// decodeErrorStatus is the Status of the ERROR event for a stream that
// could not be decoded, built exactly as client-go's ErrorReporter does:
// a 500 InternalError whose message quotes "unable to decode an event from
// the watch stream: <why>", with that text as its causes.
func decodeErrorStatus(err error) *api.Status {
	msg := "unable to decode an event from the watch stream: " + err.Error()
	s := genericServerResponse(http.StatusInternalServerError, http.MethodGet, api.GroupResource{}, "", msg, 0)
	s.Details.Causes = append(s.Details.Causes, api.StatusCause{Type: causeClientWatchDecoding, Message: msg})
	return s
}

// endsQuietly reports the errors that mean "the stream is over" rather
// than "the stream is broken": they close ResultChan without an ERROR.
// Besides what IsProbableEOF and timeouts cover (as in client-go), that is
// an idle watch we cut ourselves and a cancelled context: the caller asked
// for the end.
func endsQuietly(err error) bool {
	return IsProbableEOF(err) || isTimeout(err) ||
		errors.Is(err, ErrWatchIdle) || errors.Is(err, context.Canceled)
}

// describe is the one-line narration of an event.
func describe(ev api.Event) string {
	switch {
	case ev.Type == api.Error && ev.Status != nil:
		return fmt.Sprintf("ERROR %d %s: %s", ev.Status.Code, ev.Status.Reason, ev.Status.Message)
	case ev.Object != nil && ev.Type == api.Bookmark:
		return fmt.Sprintf("BOOKMARK rv=%s", ev.Object.Metadata.ResourceVersion)
	case ev.Object != nil:
		return fmt.Sprintf("%s %s rv=%s", ev.Type, ev.Object.Key(), ev.Object.Metadata.ResourceVersion)
	}
	return string(ev.Type)
}
