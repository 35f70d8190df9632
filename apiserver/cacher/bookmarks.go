package cacher

import (
	"time"
)

// Bookmarks. A BOOKMARK tells a client "you have everything up to this
// revision", so that when its watch ends (the server's timeout, a dropped
// connection) it resumes from there instead of from the last object it
// happened to see, which may be old enough to get a 410. Kubernetes sends
// them only to watchers that asked (allowWatchBookmarks=true), whatever
// their selectors (fixture watch-bookmarks-periodic-selector-nomatch), and
// only once the cache has moved past the revision the watch started from
// (fixture watch-bookmarks-timeout5-quiet: a quiet watch gets none):
//
//   - about once a minute (BookmarkInterval), and
//   - about 2 s before the watch's deadline, so the client can resume after
//     the timeout without replaying or missing anything.
//
// Like Kubernetes (which files watchers into one-second buckets), the
// dispatcher checks at most once a second, so a bookmark comes up to a
// second late; the pre-deadline one therefore lands 1-2 s before the end
// (fixture: 3.6 s into a 5 s watch).

// bookmarkLead is how long before its deadline a watcher gets its last
// bookmark.
const bookmarkLead = 2 * time.Second

// bookmarkInterval is the current periodic-bookmark interval.
func (c *Cacher) bookmarkInterval() time.Duration {
	if c.cfg.BookmarkInterval != nil {
		if d := c.cfg.BookmarkInterval(); d > 0 {
			return d
		}
	}
	return DefaultBookmarkInterval
}

// bookmarkTick is how often the dispatcher looks for watchers due a
// bookmark: every second, or more often when a workshop sets an interval of
// a few seconds or less.
func (c *Cacher) bookmarkTick() time.Duration {
	return min(time.Second, max(c.bookmarkInterval()/4, 10*time.Millisecond))
}

// nextBookmarkTime is when a watcher is due its next bookmark: one interval
// from now, or 2 s before its deadline if that is sooner. Zero means none:
// the pre-deadline bookmark time has passed.
func nextBookmarkTime(now time.Time, interval time.Duration, deadline time.Time) time.Time {
	next := now.Add(interval)
	if deadline.IsZero() {
		return next
	}
	if pre := deadline.Add(-bookmarkLead); pre.Before(next) {
		next = pre
	}
	if next.Before(now) {
		return time.Time{}
	}
	return next
}

// bookmarks sends a BOOKMARK at the dispatcher's revision to every watcher
// that is due one, and schedules its next.
func (d *dispatcher) bookmarks(now time.Time) {
	c := d.c
	interval := c.bookmarkInterval()
	c.watchers.mu.Lock()
	d.watchers = d.watchers[:0]
	for _, list := range c.watchers.byNamespace {
		for _, w := range list {
			if w.opts.AllowBookmarks && !w.nextBookmark.IsZero() && !now.Before(w.nextBookmark) {
				d.watchers = append(d.watchers, w)
			}
		}
	}
	c.watchers.mu.Unlock()
	if len(d.watchers) == 0 {
		return
	}

	sent := 0
	for _, w := range d.watchers {
		w.nextBookmark = nextBookmarkTime(now, interval, w.opts.Deadline)
		// Only once the cache has moved past the watch's start, and never
		// below what the watcher has already been given (the dispatcher has
		// handed every watcher everything up to d.rev, so this holds; the
		// check keeps it true whatever changes around it).
		if d.rev <= w.bookmarkAfter {
			continue
		}
		w.mu.Lock()
		behind := w.lastQueued > d.rev
		w.mu.Unlock()
		if behind {
			continue
		}
		// Counted before it is queued, so whoever reads the bookmark sees it
		// counted; taken back if it was not queued.
		w.bookmarks.Add(1)
		if w.push(c.bookmarkFrame(d.rev), d.rev, false) == pushed {
			sent++
		} else {
			w.bookmarks.Add(-1)
		}
	}
	clear(d.watchers)
	if sent > 0 && c.tracing() {
		c.trace("BOOKMARK rev %d to %d watchers", d.rev, sent)
	}
}
