package cacher

import "listwatch/narrate"

// Faults are the workshop switches that act on the watch cache.

// KillWatchers ends every open watcher with ErrKilled and returns how many.
// The HTTP layer then drops each connection abruptly, as tcpkill does in the
// first article: the clients see a broken stream, not a clean end, and must
// re-watch from the last revision they saw.
func (c *Cacher) KillWatchers() int {
	n := c.terminateAll(ErrKilled)
	c.killed.Add(int64(n))
	if c.tr.Enabled() {
		c.tr.Printf(narrate.WatchCache, "%s: fault: killed %d watch connections", c.name, n)
	}
	return n
}
