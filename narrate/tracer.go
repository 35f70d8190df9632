package narrate

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// The layers, in the order an event passes through them. Lines are tagged
// with one of these so a reader can see where each step happened.
const (
	Store         = "store"
	WatchCache    = "watchcache"
	HTTP          = "http"
	StreamWatcher = "streamwatcher"
	RetryWatcher  = "retrywatcher"
	Reflector     = "reflector"
	Queue         = "queue"
	Indexer       = "indexer"
	Processor     = "processor"
	Handler       = "handler"
	// Workqueue and Controller are past the informer: a handler puts a key
	// in the workqueue, a controller's worker takes it out and reconciles.
	Workqueue  = "workqueue"
	Controller = "controller"
)

// layerWidth aligns the message column; it fits the longest layer name.
const layerWidth = len(StreamWatcher) + 1

// colours per layer, used only when the Tracer writes to a terminal.
var layerColours = map[string]string{
	Store: "\x1b[35m", WatchCache: "\x1b[34m", HTTP: "\x1b[36m",
	StreamWatcher: "\x1b[32m", RetryWatcher: "\x1b[32m", Reflector: "\x1b[33m",
	Queue: "\x1b[33m", Indexer: "\x1b[31m", Processor: "\x1b[31m", Handler: "\x1b[1m",
	Workqueue: "\x1b[36m", Controller: "\x1b[1m",
}

// Tracer writes one aligned line per step to a writer. It is safe for
// concurrent use; lines from different goroutines never interleave.
type Tracer struct {
	mu     sync.Mutex
	w      io.Writer
	start  time.Time
	colour bool
	times  bool
	filter func(layer, line string) bool
}

// Option configures a Tracer.
type Option func(*Tracer)

// WithColour colours the layer column. Turn it on only for terminals.
func WithColour(on bool) Option { return func(t *Tracer) { t.colour = on } }

// WithoutTimes drops the elapsed-time column, for output that must be stable
// (tests, examples, docs).
func WithoutTimes() Option { return func(t *Tracer) { t.times = false } }

// WithStart times lines from start instead of from New, so that Tracers
// writing to one output share one clock.
func WithStart(start time.Time) Option { return func(t *Tracer) { t.start = start } }

// WithFilter keeps only the lines for which keep returns true, e.g. the lines
// that mention one object's name.
func WithFilter(keep func(layer, line string) bool) Option {
	return func(t *Tracer) { t.filter = keep }
}

// New returns a Tracer that writes to w, timing lines from now.
func New(w io.Writer, opts ...Option) *Tracer {
	t := &Tracer{w: w, start: time.Now(), times: true}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Enabled reports whether lines are written at all. Guard expensive
// formatting with it; a nil Tracer is disabled.
func (t *Tracer) Enabled() bool { return t != nil }

// Printf writes one line for layer. Calling it on a nil Tracer does nothing.
func (t *Tracer) Printf(layer, format string, args ...any) {
	if t == nil {
		return
	}
	line := fmt.Sprintf(format, args...)
	if t.filter != nil && !t.filter(layer, line) {
		return
	}
	var b strings.Builder
	if t.times {
		fmt.Fprintf(&b, "+%7.3fs ", time.Since(t.start).Seconds())
	}
	if c, ok := layerColours[layer]; ok && t.colour {
		fmt.Fprintf(&b, "%s%-*s\x1b[0m", c, layerWidth, layer)
	} else {
		fmt.Fprintf(&b, "%-*s", layerWidth, layer)
	}
	b.WriteString(line)
	b.WriteByte('\n')
	t.mu.Lock()
	defer t.mu.Unlock()
	// A tracer must never break the layer it observes, so write errors
	// (a closed pipe, say) are ignored.
	_, _ = io.WriteString(t.w, b.String())
}
