package cacher

import "slices"

// Stats returns the current snapshot, watchers ordered by ID.
func (c *Cacher) Stats() Stats {
	c.mu.RLock()
	s := Stats{
		Resource:        c.name,
		Revision:        c.wc.rev,
		OldestRevision:  c.oldestLocked(),
		HistoryLen:      c.wc.hist.len(),
		HistoryCap:      c.wc.hist.capy,
		HistoryBytes:    c.wc.hist.bytes,
		HistoryMaxBytes: c.wc.hist.maxBytes,
	}
	c.mu.RUnlock()
	s.EventsDispatched = c.eventsDispatched.Load()
	s.TooOldErrors = c.tooOld.Load()
	s.ClosedTooSlow = c.closedTooSlow.Load()
	s.Killed = c.killed.Load()
	s.FramesEncoded = c.framesEncoded.Load()
	s.BytesEncoded = c.bytesEncoded.Load()
	s.Relists = c.relists.Load()
	s.QueuedFrames = c.queued.Load()

	c.wmu.Lock()
	ws := make([]*CacheWatcher, 0, c.count)
	for _, list := range c.watchers {
		ws = append(ws, list...)
	}
	c.wmu.Unlock()
	s.Watchers = make([]WatcherStat, 0, len(ws))
	for _, w := range ws {
		s.Watchers = append(s.Watchers, WatcherStat{
			ID:             w.id,
			Namespace:      w.opts.Namespace,
			Label:          w.opts.Label.String(),
			Field:          w.opts.Field.String(),
			Description:    w.opts.Description,
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
