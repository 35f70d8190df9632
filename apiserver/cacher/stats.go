package cacher

import (
	"slices"
	"sync/atomic"
	"time"
)

// Stats is a snapshot for the debug view.
type Stats struct {
	Resource string `json:"resource"`
	// Revision is the newest revision the cache has applied.
	Revision int64 `json:"revision"`
	// OldestRevision is the revision of the oldest event the ring can still
	// replay (later if the store was compacted past it): a watch from N
	// needs N >= OldestRevision-1, the number a 410 names in parentheses.
	OldestRevision int64 `json:"oldestReplayableRevision"`
	HistoryLen     int   `json:"historyLen"`
	HistoryCap     int   `json:"historyCap"`
	// Replayable counts the ring's events a watch can still be replayed
	// (those from OldestRevision on): after the store is compacted past
	// them, the ring still holds its events but can replay none of them.
	Replayable int `json:"replayable"`
	// HistoryBytes is what the ring's events are charged, at most
	// HistoryMaxBytes (unless one event alone is larger).
	HistoryBytes     int64 `json:"historyBytes"`
	HistoryMaxBytes  int64 `json:"historyMaxBytes"`
	EventsDispatched int64 `json:"eventsDispatched"`
	TooOldErrors     int64 `json:"tooOldErrors"`
	ClosedTooSlow    int64 `json:"closedTooSlow"`
	Killed           int64 `json:"killed"`
	// FramesEncoded and BytesEncoded count the watch frames built: once per
	// event and frame type however many watchers get it (encode once).
	FramesEncoded int64 `json:"framesEncoded"`
	BytesEncoded  int64 `json:"bytesEncoded"`
	// QueuedFrames is how many frames wait in the watchers' queues now.
	QueuedFrames int64 `json:"queuedFrames"`
	// Relists counts how often the cache lost its store watch and re-listed.
	Relists  int64         `json:"relists"`
	Watchers []WatcherStat `json:"watchers"`
}

// WatcherStat describes one open watcher.
type WatcherStat struct {
	ID          int64     `json:"id"`
	Namespace   string    `json:"namespace,omitempty"`
	Label       string    `json:"labelSelector,omitempty"`
	Field       string    `json:"fieldSelector,omitempty"`
	Description string    `json:"description,omitempty"`
	RemoteAddr  string    `json:"remoteAddr,omitempty"`
	Transport   string    `json:"transport,omitempty"`
	Request     string    `json:"request,omitempty"`
	Started     time.Time `json:"started"`
	// StartRevision is the revision the watch is served from: events at or
	// below it are never sent, and bookmarks wait until the cache passes it.
	StartRevision int64 `json:"startRevision"`
	// LastRevision is the highest revision handed to the HTTP writer.
	LastRevision   int64 `json:"lastRevisionSent"`
	AllowBookmarks bool  `json:"allowBookmarks,omitempty"`
	// Buffered counts frames queued (BufferCap at most) plus the synthetic
	// or replayed events still to send.
	Buffered  int `json:"buffered"`
	BufferCap int `json:"bufferCap"`
	// BookmarksSent counts the BOOKMARKs queued for the watcher: periodic,
	// before its deadline, and the one ending a watch-list's initial events.
	BookmarksSent int64 `json:"bookmarksSent"`
}

// counters are the watch cache's running totals, for the debug view and
// /metrics. received and sent are counted once per batch (of store events
// applied, of frames one watch wrote), never per frame: the fan-out's hot
// path pays one atomic add per write, however many events it carries.
type counters struct {
	eventsDispatched, tooOld, closedTooSlow, killed, relists atomic.Int64
	received, sent                                           atomic.Int64
}

// Totals are a cache's counters and sizes, without the per-watcher detail
// of Stats: what /metrics reads on every scrape, cheaply.
type Totals struct {
	// Revision is the newest revision the cache has applied.
	Revision int64
	// Objects is how many objects the cache holds now.
	Objects int
	// HistoryCap is the ring's capacity in events.
	HistoryCap int
	// EventsReceived counts the store events applied, EventsDispatched the
	// events handed to watchers, EventsSent the frames watches wrote to
	// their clients (one event may be sent to many watches).
	EventsReceived, EventsDispatched, EventsSent int64
	// ClosedTooSlow counts watchers closed for not keeping up.
	ClosedTooSlow int64
	// Initializations counts the lists the cache was built from: the
	// first, and one per re-list.
	Initializations int64
}

// Totals returns the cache's counters and sizes now.
func (c *Cacher) Totals() Totals {
	c.mu.RLock()
	t := Totals{Revision: c.wc.rev, Objects: len(c.wc.state), HistoryCap: c.wc.hist.capy}
	c.mu.RUnlock()
	t.EventsReceived = c.counters.received.Load()
	t.EventsDispatched = c.counters.eventsDispatched.Load()
	t.EventsSent = c.counters.sent.Load()
	t.ClosedTooSlow = c.counters.closedTooSlow.Load()
	t.Initializations = 1 + c.counters.relists.Load()
	return t
}

// Sent counts n frames this watcher's writer has written to its client:
// called once per write, with the whole batch.
func (w *CacheWatcher) Sent(n int) { w.c.counters.sent.Add(int64(n)) }

// Stats returns the current snapshot, watchers ordered by ID.
func (c *Cacher) Stats() Stats {
	c.mu.RLock()
	s := Stats{
		Resource:        c.name(),
		Revision:        c.wc.rev,
		OldestRevision:  c.oldestLocked(),
		HistoryLen:      c.wc.hist.len(),
		HistoryCap:      c.wc.hist.capy,
		HistoryBytes:    c.wc.hist.bytes,
		HistoryMaxBytes: c.wc.hist.maxBytes,
	}
	s.Replayable = c.wc.countAfter(s.OldestRevision - 1)
	c.mu.RUnlock()
	s.EventsDispatched = c.counters.eventsDispatched.Load()
	s.TooOldErrors = c.counters.tooOld.Load()
	s.ClosedTooSlow = c.counters.closedTooSlow.Load()
	s.Killed = c.counters.killed.Load()
	s.FramesEncoded = c.framesEncoded.Load()
	s.BytesEncoded = c.bytesEncoded.Load()
	s.Relists = c.counters.relists.Load()
	s.QueuedFrames = c.QueuedFrames()

	c.watchers.mu.Lock()
	ws := make([]*CacheWatcher, 0, c.watchers.count)
	for _, list := range c.watchers.byNamespace {
		ws = append(ws, list...)
	}
	c.watchers.mu.Unlock()
	s.Watchers = make([]WatcherStat, 0, len(ws))
	for _, w := range ws {
		s.Watchers = append(s.Watchers, WatcherStat{
			ID:             w.id,
			Namespace:      w.opts.Namespace,
			Label:          w.opts.Label.String(),
			Field:          w.opts.Field.String(),
			Description:    w.opts.Description,
			RemoteAddr:     w.opts.RemoteAddr,
			Transport:      w.opts.Transport,
			Request:        w.opts.Request,
			Started:        w.started,
			StartRevision:  w.startRev,
			LastRevision:   w.sent.Load(),
			AllowBookmarks: w.opts.AllowBookmarks,
			Buffered:       w.buffered(),
			BufferCap:      c.cfg.WatcherBuffer,
			BookmarksSent:  w.bookmarks.Load(),
		})
	}
	slices.SortFunc(s.Watchers, func(a, b WatcherStat) int { return int(a.ID - b.ID) })
	return s
}
