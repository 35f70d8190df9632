package store

import (
	"time"

	"listwatch/narrate"
)

// Defaults for the zero Options.
const (
	DefaultHistoryLimit = 10000
	// DefaultHistoryBytes bounds the history in bytes as well as in events
	// (128 MiB). Without it, 10,000 events of 3 MiB objects would be 30 GB;
	// with it a laptop keeps at most a few dozen such events, and a watch
	// or exact read further back gets 410 Expired. etcd's nearest knob is
	// --quota-backend-bytes (2 GiB), a cap on the whole database on disk.
	DefaultHistoryBytes = 128 << 20
	DefaultWatchBuffer  = 1024
)

// Options configures a Store. The zero value is usable.
type Options struct {
	// HistoryLimit is how many past events are kept for watches and
	// revision reads; older ones are compacted automatically. Default 10000.
	HistoryLimit int
	// HistoryBytes bounds the same history by the estimated size of its
	// events' objects (api.Object.Size); the oldest events are compacted
	// until the rest fits. One event larger than the whole budget is still
	// kept, alone. Default DefaultHistoryBytes.
	HistoryBytes int64
	// WatchBuffer is how many events a watcher may have unread. A watcher
	// with WatchBuffer events unread when another must be queued is ended
	// with ErrWatcherTooSlow; writers never wait. Only a small channel is
	// reserved per watcher; the rest is taken while a reader is behind
	// (spill.go). Default 1024.
	WatchBuffer int
	// StartRevision is the revision of the empty store (default 1): the
	// first write gets StartRevision+1. Every revision below it counts as
	// compacted, so a client that still holds a resourceVersion from an
	// earlier life of the server (a restart) gets 410 Expired and re-lists
	// instead of waiting for a revision this store may never reach.
	// RevisionFromClock gives a value above any earlier life's revisions.
	StartRevision int64
	// CompactionInterval, if positive, compacts the history in the
	// background every interval, through the revision that was current one
	// interval before, as kube-apiserver's compactor does
	// (--etcd-compaction-interval, 5 minutes). Without it history is only
	// compacted when it outgrows HistoryLimit or HistoryBytes, so on a quiet
	// store an exact read of an old revision (a paged list's next page)
	// keeps working for ever. 0 (the default) turns it off.
	CompactionInterval time.Duration
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
	if o.HistoryBytes <= 0 {
		o.HistoryBytes = DefaultHistoryBytes
	}
	if o.WatchBuffer <= 0 {
		o.WatchBuffer = DefaultWatchBuffer
	}
	if o.StartRevision <= 0 {
		o.StartRevision = firstRevision
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
