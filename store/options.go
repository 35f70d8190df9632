package store

import (
	"time"

	"listwatch/narrate"
)

// Defaults for the zero Options.
const (
	DefaultHistoryLimit = 10000
	DefaultWatchBuffer  = 1024
)

// Options configures a Store. The zero value is usable.
type Options struct {
	// HistoryLimit is how many past events are kept for watches and
	// revision reads; older ones are compacted automatically. Default 10000.
	HistoryLimit int
	// WatchBuffer is each watcher's buffered channel size. A watcher whose
	// buffer is full when an event must be queued is ended with
	// ErrWatcherTooSlow; writers never wait. Default 1024.
	WatchBuffer int
	// Tracer narrates every commit; nil is silent.
	Tracer *narrate.Tracer
	// Now stamps creationTimestamp; defaults to time.Now.
	Now func() time.Time
}

// withDefaults fills in the zero fields. Negative sizes count as unset: a
// store without history or watch buffers could not serve a single watch.
func (o Options) withDefaults() Options {
	if o.HistoryLimit <= 0 {
		o.HistoryLimit = DefaultHistoryLimit
	}
	if o.WatchBuffer <= 0 {
		o.WatchBuffer = DefaultWatchBuffer
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
