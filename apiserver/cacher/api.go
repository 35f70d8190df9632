package cacher

// CONTRACT FILE: the watch cache's API that the apiserver's HTTP layer is
// written against. The implementation may move these declarations into files
// named after their concepts, but must keep every name and signature.

import (
	"context"
	"errors"
	"time"

	"listwatch/api"
	"listwatch/narrate"
	"listwatch/store"
)

// Why a CacheWatcher ended; CacheWatcher.Err returns one of these (wrapped).
var (
	// ErrTooSlow: the watcher's buffer stayed full past the shared time
	// budget; the client sees a clean end of stream and must re-watch.
	ErrTooSlow = errors.New("watcher too slow: closed by the dispatcher")
	// ErrKilled: the kill-connections fault ended it; the HTTP layer must
	// drop the connection abruptly (no clean end of stream).
	ErrKilled = errors.New("watch connection killed by fault injection")
	// ErrStopped: the cacher (or the watcher) was stopped.
	ErrStopped = errors.New("watch cache stopped")
)

// Config configures one Cacher (one per resource).
type Config struct {
	Store    *store.Store
	Prefix   string // e.g. "/registry/configmaps/"; keys are Prefix+[ns/]name
	Resource api.GroupResource
	// Kind and APIVersion stamp BOOKMARK objects ({"kind":"ConfigMap",...}).
	Kind, APIVersion string
	// HistorySize is the ring buffer's capacity in events (0: default, see doc).
	HistorySize int
	// WatcherBuffer is each watcher's bounded queue in frames (0: default).
	WatcherBuffer int
	// BookmarkInterval returns the current periodic-bookmark interval; it is
	// a func so workshops can change it at runtime. nil: 1 minute.
	BookmarkInterval func() time.Duration
	Tracer           *narrate.Tracer
}

// WatchOptions describes one watch request after the HTTP layer has parsed
// and validated its query.
type WatchOptions struct {
	// ResourceVersion is the parsed ?resourceVersion; RVSet is false when the
	// parameter was absent or "". Unset or 0 without SendInitialEvents=false
	// means: synthetic ADDED for the current state (sorted by key), then
	// changes. N > 0 means: every change after N (in-stream 410 if N is
	// older than the ring buffer can replay; wait if N is in the future).
	ResourceVersion int64
	RVSet           bool
	// SendInitialEvents, when non-nil and true, sends the synthetic ADDED
	// events and then a BOOKMARK annotated api.InitialEventsEndAnnotation.
	SendInitialEvents *bool
	AllowBookmarks    bool
	Namespace         string // "" for all namespaces
	Label             api.LabelSelector
	Field             api.FieldSelector
	// Deadline is when the HTTP layer will end this watch; the cacher sends
	// a bookmark about 2 s before it (if AllowBookmarks).
	Deadline time.Time
	// Description is shown in the debug view (e.g. the client's user agent).
	Description string
}

// New starts a cacher: it lists the prefix, watches the store from that
// revision and keeps the watch cache up to date until ctx is done or Stop.
func New(ctx context.Context, cfg Config) (*Cacher, error) { return nil, errors.New("not implemented") }

// Cacher is the watch cache of one resource.
type Cacher struct{ _ [0]func() }

// Stop ends the cacher and every watcher it serves (ErrStopped).
func (c *Cacher) Stop() {}

// Revision is the newest revision the cache has applied.
func (c *Cacher) Revision() int64 { return 0 }

// List returns the cached objects that match, at a revision >= minRV,
// sorted by key. If the cache is behind minRV it waits up to 3 s, then
// returns api.NewTooLargeResourceVersion(minRV, current, 1).
func (c *Cacher) List(ctx context.Context, minRV int64, match func(*api.Object) bool) ([]*api.Object, int64, error) {
	return nil, 0, nil
}

// Watch registers a watcher. Errors that Kubernetes reports in-stream (410
// too old, 504 with sendInitialEvents) are not returned here: the watcher
// delivers one ERROR frame and ends.
func (c *Cacher) Watch(ctx context.Context, opts WatchOptions) (*CacheWatcher, error) {
	return nil, nil
}

// CacheWatcher is one client's watch. Frames are complete JSON events,
// encoded once per event and shared by every watcher that gets the same
// event type, each ending in '\n'. They must not be modified.
type CacheWatcher struct{ _ [0]func() }

// Next blocks until at least one frame is ready, then appends every ready
// frame to buf and returns it, so the caller can write them all in one
// write() and flush once. When the watcher has ended and its queue is drained
// it returns the frames it has with the reason (ErrTooSlow, ErrKilled,
// ErrStopped); it returns ctx.Err() when ctx is done.
func (w *CacheWatcher) Next(ctx context.Context, buf [][]byte) ([][]byte, error) { return buf, nil }

// Stop unregisters the watcher. Idempotent.
func (w *CacheWatcher) Stop() {}

// Faults are the workshop switches that act on the watch cache.
// KillWatchers ends every open watcher with ErrKilled and returns how many.
func (c *Cacher) KillWatchers() int { return 0 }

// Stats is a snapshot for the debug view.
type Stats struct {
	Resource         string        `json:"resource"`
	Revision         int64         `json:"revision"`
	OldestRevision   int64         `json:"oldestReplayableRevision"`
	HistoryLen       int           `json:"historyLen"`
	HistoryCap       int           `json:"historyCap"`
	EventsDispatched int64         `json:"eventsDispatched"`
	TooOldErrors     int64         `json:"tooOldErrors"`
	ClosedTooSlow    int64         `json:"closedTooSlow"`
	Killed           int64         `json:"killed"`
	Watchers         []WatcherStat `json:"watchers"`
}

// WatcherStat describes one open watcher.
type WatcherStat struct {
	ID           int64     `json:"id"`
	Namespace    string    `json:"namespace,omitempty"`
	Label        string    `json:"labelSelector,omitempty"`
	Field        string    `json:"fieldSelector,omitempty"`
	Description  string    `json:"description,omitempty"`
	Started      time.Time `json:"started"`
	LastRevision int64     `json:"lastRevisionSent"`
	Buffered     int       `json:"buffered"`
	BufferCap    int       `json:"bufferCap"`
}

// Stats returns the current snapshot.
func (c *Cacher) Stats() Stats { return Stats{} }
