package store

import (
	"time"

	"listwatch/narrate"
)

// The background compactor: the stand-in for the one kube-apiserver runs
// against etcd (storage/etcd3/compact.go, every --etcd-compaction-interval,
// 5 minutes by default). Each tick compacts through the revision that was
// current at the previous tick, so history always reaches back at least one
// interval and never more than two. Without it a store that is written
// rarely would keep every old revision readable for ever, and a client
// reading pages at one old revision would never be told to start over
// (docs/limits.md).

// compactEvery runs until the store closes.
func (s *Store) compactEvery(interval time.Duration) {
	defer s.compactor.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	last := s.Revision() // the revision seen at the previous tick
	for {
		select {
		case <-s.closedc:
			return
		case <-t.C:
		}
		cur := s.Revision()
		if last > s.CompactedRevision() {
			// A compaction at or below the current one fails harmlessly:
			// history was already compacted past it by its limits.
			if err := s.Compact(last); err == nil && s.tr.Enabled() {
				s.tr.Printf(narrate.Store, "periodic compaction through rev %d (every %v)", last, interval)
			}
		}
		last = cur
	}
}

// RevisionFromClock is a start revision (Options.StartRevision) above every
// revision an earlier life of the server can have issued: the wall clock in
// microseconds since 1970. An earlier life that started at T and ran until
// now would have had to commit more than a million writes a second to get
// past it. It stays below 2^53 until the year 2255, so even clients that
// read numbers as floating point keep it exact.
func RevisionFromClock(now time.Time) int64 { return now.UnixMicro() }
