package cacher

// What the apiserver's HTTP layer hands the watch cache: a Config per
// resource and WatchOptions per watch, and the errors a watch ends with. The
// types that do the work are in cacher.go (Cacher) and cache_watcher.go
// (CacheWatcher); the debug snapshot is in stats.go.

import (
	"errors"
	"time"

	"listwatch/api"
	"listwatch/narrate"
	"listwatch/store"
)

// Why a CacheWatcher ended; CacheWatcher.Err and Next return one of these
// (possibly wrapped, so compare with errors.Is).
var (
	// ErrTooSlow: the watcher's buffer stayed full past the shared time
	// budget; the client sees a clean end of stream and must re-watch.
	ErrTooSlow = errors.New("watcher too slow: closed by the dispatcher")
	// ErrKilled: the kill-connections fault ended it; the HTTP layer must
	// drop the connection abruptly (no clean end of stream).
	ErrKilled = errors.New("watch connection killed by fault injection")
	// ErrStopped: the cacher (or the watcher) was stopped, or the cache
	// re-listed the store and can no longer serve this watch continuously.
	ErrStopped = errors.New("watch cache stopped")
	// ErrStatusSent: the watch delivered one in-stream ERROR event (410
	// Expired for a too old resourceVersion, 504 for a cache that did not
	// catch up in time) and ended, as Kubernetes' watch cache does. The
	// client sees a clean end of stream after the ERROR event.
	ErrStatusSent = errors.New("watch ended after an in-stream ERROR event")
)

// Defaults for the zero values of Config.
const (
	// DefaultHistorySize is the ring buffer's capacity in events. Kubernetes
	// resizes its ring between 100 and 102,400 entries to keep about 75 s of
	// history; we keep a fixed capacity instead (the ring still grows on
	// demand up to it, so an idle resource costs little). 10,000 events is
	// 75 s of a steady 130 writes per second to one resource: far more than
	// a workshop produces, and enough that a burst of writes never outruns
	// the dispatcher (see Config.HistorySize).
	DefaultHistorySize = 10000
	// DefaultHistoryBytes bounds the ring in bytes too (64 MiB per
	// resource): an event is charged twice its object's size, for the
	// object and its encoded frame. 10,000 events of 3 MiB objects would
	// otherwise pin 60 GB; with it a resource written with 2 MB objects
	// keeps the last 16 or so, and older watches get 410 and re-list.
	// Kubernetes' watch cache has no byte limit, only its event capacity.
	DefaultHistoryBytes = 64 << 20
	// DefaultWatcherBuffer is each watcher's queue in frames. Kubernetes
	// sizes its per-watcher channel between 10 and 1,000 from the event
	// rate; 100 absorbs a burst while the client's connection drains.
	DefaultWatcherBuffer = 100
	// DefaultBookmarkInterval is how often a watcher that allows bookmarks
	// gets one (Kubernetes' defaultBookmarkFrequency).
	DefaultBookmarkInterval = time.Minute
)

// Config configures one Cacher (one per resource).
type Config struct {
	// Store is the store to follow: the in-memory store or etcd.
	Store    store.Interface
	Prefix   string // e.g. "/registry/configmaps/"; keys are Prefix+[ns/]name
	Resource api.GroupResource
	// Kind and APIVersion stamp BOOKMARK objects ({"kind":"ConfigMap",...}).
	Kind, APIVersion string
	// HistorySize is the ring buffer's capacity in events (0: default, see
	// DefaultHistorySize). A watch from a revision older than the ring can
	// replay gets 410 Expired. The ring is also the dispatcher's queue: when
	// the dispatcher is a whole ring behind the store, the cache stops
	// reading the store until it catches up.
	HistorySize int
	// HistoryBytes bounds the same ring in bytes (0: DefaultHistoryBytes),
	// with the same consequences: older watches get 410, and a dispatcher
	// that many bytes behind holds up the store follower.
	HistoryBytes int64
	// MaxQueuedFrames is how much fan-out, in frames, may wait before
	// AdmitWrite makes a writer wait (0: DefaultMaxQueuedFrames; negative:
	// never wait).
	MaxQueuedFrames int64
	// WatcherBuffer is each watcher's bounded queue in frames (0: default).
	WatcherBuffer int
	// Turns is the line the watchers wait in to write (turns.go); the
	// caches of one server share one. nil: a line of this cache's own.
	Turns *Turns
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
	// events and then, if AllowBookmarks is also set (as Kubernetes
	// requires: client-go's watch-list always sets both), a BOOKMARK
	// annotated api.InitialEventsEndAnnotation. With the resourceVersion
	// unset it first waits (up to 3 s, then an in-stream 504) until the
	// cache has caught up with the store's current revision.
	SendInitialEvents *bool
	AllowBookmarks    bool
	Namespace         string // "" for all namespaces
	Label             api.LabelSelector
	Field             api.FieldSelector
	// FieldMatch, if set, matches Field instead of Field.MatchesObject
	// (which knows only the metadata fields), for kinds selectable by their
	// own fields (a Pod by spec.nodeName).
	FieldMatch func(*api.Object) bool
	// Deadline is when the HTTP layer will end this watch; the cacher sends
	// a bookmark about 2 s before it (if AllowBookmarks).
	Deadline time.Time
	// Description is shown in the debug view (e.g. the client's user agent).
	Description string
	// RemoteAddr is the client's address (host:port), for the debug view:
	// with one server for a room, it says whose watch a watcher is.
	RemoteAddr string
	// Transport is how the watch is written ("h1 chunked", "h1 websocket",
	// "h2 stream": the WatchServer's names), for the debug view.
	Transport string
	// Request is the request URI that opened the watch (path and query, as
	// the client sent it and kube-apiserver's request log records it), for
	// the debug view: a client finds its own watch there by the exact
	// request it sent.
	Request string
}

// Matches reports whether obj is in the watch's namespace and selectors
// (Kubernetes' SelectionPredicate.Matches); a nil obj never is.
func (o *WatchOptions) Matches(obj *api.Object) bool {
	if obj == nil {
		return false
	}
	if o.Namespace != "" && obj.Metadata.Namespace != o.Namespace {
		return false
	}
	if !o.Label.Empty() && !o.Label.Matches(obj.Metadata.Labels) {
		return false
	}
	if !o.Field.Empty() {
		if o.FieldMatch != nil {
			return o.FieldMatch(obj)
		}
		return o.Field.MatchesObject(obj)
	}
	return true
}

// MatchesEverything reports whether the watch selects every object of its
// resource: no namespace, labels or fields to match.
func (o *WatchOptions) MatchesEverything() bool {
	return o.Namespace == "" && o.Label.Empty() && o.Field.Empty()
}
