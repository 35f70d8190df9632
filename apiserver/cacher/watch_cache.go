package cacher

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"listwatch/api"
)

// watchCache is the data the cacher serves from: the current objects and a
// ring of recent events. It mirrors Kubernetes' watchCache
// (storage/cacher/watch_cache.go and watch_cache_history.go). All of it is
// guarded by Cacher.mu; only the goroutine following the store writes it.
type watchCache struct {
	// state holds, for each key that exists, the last event that wrote it.
	state map[string]*event
	// sorted is state's events in key order, built on demand and dropped
	// on every change, so that many watches from resourceVersion 0 at the
	// same revision share one sort.
	sorted []*event
	hist   history
	// rev is the newest revision the cache reflects. It moves with each
	// event and, on a progress event, to the store's revision when no
	// event of this resource came in between.
	rev int64
	// listRev is the revision of the last list of the store. Until the ring
	// drops an event, every change after listRev can be replayed.
	listRev            int64
	removedSinceRelist bool
	// epoch counts re-lists; the dispatcher uses it to tell a reset ring
	// from one it fell behind.
	epoch int64
}

// history is a ring of events that grows on demand up to its capacity in
// events, and holds at most maxBytes of them (by event.size; one event
// larger than that is still held, alone). Events are numbered by a sequence
// that never decreases, not even when a re-list empties the ring, so the
// dispatcher can hold a position in it.
type history struct {
	buf   []*event
	capy  int
	first uint64 // sequence number of the oldest event held
	next  uint64 // sequence number the next event gets
	// bytes is what the held events are charged; appended is what every
	// event ever appended was charged, so the bytes between two sequence
	// numbers are a subtraction (see pendingBytes).
	bytes, maxBytes, appended int64
}

func (h *history) len() int { return int(h.next - h.first) }

func (h *history) at(seq uint64) *event { return h.buf[seq%uint64(len(h.buf))] }

// append adds e, first dropping the oldest events while the ring is full in
// events or e would not fit in bytes (reported).
func (h *history) append(e *event) (dropped bool) {
	for h.len() > 0 && (h.len() == h.capy || h.bytes+e.size > h.maxBytes) {
		old := h.at(h.first)
		h.bytes -= old.size
		h.buf[h.first%uint64(len(h.buf))] = nil
		h.first++
		dropped = true
	}
	if h.len() == len(h.buf) {
		h.grow()
	}
	e.appendedBefore = h.appended
	h.appended += e.size
	h.bytes += e.size
	h.buf[h.next%uint64(len(h.buf))] = e
	h.next++
	return dropped
}

// pendingBytes is what the events from sequence from on are charged.
func (h *history) pendingBytes(from uint64) int64 {
	if from >= h.next {
		return 0
	}
	return h.appended - h.at(from).appendedBefore
}

// grow doubles the ring (up to capy), keeping every sequence's slot.
func (h *history) grow() {
	size := min(max(2*len(h.buf), 64), h.capy)
	buf := make([]*event, size)
	for s := h.first; s < h.next; s++ {
		buf[s%uint64(size)] = h.at(s)
	}
	h.buf = buf
}

// reset empties the ring; sequence numbers keep counting.
func (h *history) reset() {
	clear(h.buf)
	h.first = h.next
	h.bytes = 0
}

// apply records one store event. The caller holds Cacher.mu for writing.
func (wc *watchCache) apply(e *event) {
	switch e.typ {
	case api.Deleted:
		delete(wc.state, e.key)
	default:
		wc.state[e.key] = e
	}
	wc.sorted = nil
	if wc.hist.append(e) {
		wc.removedSinceRelist = true
	}
	wc.rev = max(wc.rev, e.rev)
}

// replace resets the cache to a fresh list of the store at rev.
func (wc *watchCache) replace(prefix string, items []*api.Object, rev int64) {
	wc.state = make(map[string]*event, len(items))
	for _, obj := range items {
		r, err := strconv.ParseInt(obj.Metadata.ResourceVersion, 10, 64)
		if err != nil {
			r = rev // the store always stamps a number; be safe anyway
		}
		key := prefix + obj.Key()
		wc.state[key] = &event{typ: api.Added, key: key, rev: r, obj: obj}
	}
	wc.sorted = nil
	wc.hist.reset()
	wc.rev = rev
	wc.listRev = rev
	wc.removedSinceRelist = false
	wc.epoch++
}

// oldest is the revision of the oldest event a watch can be replayed from;
// a watch from N is served iff N >= oldest-1. As in Kubernetes, right after
// a list that is listRev+1 even though no such event is held yet.
func (wc *watchCache) oldest() int64 {
	if !wc.removedSinceRelist || wc.hist.len() == 0 {
		return wc.listRev + 1
	}
	return wc.hist.at(wc.hist.first).rev
}

// eventsAfter copies the held events with a revision above rev, in order.
func (wc *watchCache) eventsAfter(rev int64) []*event {
	h := &wc.hist
	first := wc.firstAfter(rev)
	if first == h.next {
		return nil
	}
	out := make([]*event, 0, h.next-first)
	for s := first; s < h.next; s++ {
		out = append(out, h.at(s))
	}
	return out
}

// countAfter counts the held events with a revision above rev.
func (wc *watchCache) countAfter(rev int64) int {
	return int(wc.hist.next - wc.firstAfter(rev))
}

// firstAfter is the sequence number of the oldest held event with a
// revision above rev (hist.next if there is none): the ring is in
// revision order, so a binary search finds it.
func (wc *watchCache) firstAfter(rev int64) uint64 {
	h := &wc.hist
	i := sort.Search(h.len(), func(i int) bool { return h.at(h.first+uint64(i)).rev > rev })
	return h.first + uint64(i)
}

// sortedState returns the current objects' events in key order. The slice
// is shared: read-only. The caller holds Cacher.mu (read or write) and
// sortMu, which guards the cached slice itself.
func (wc *watchCache) sortedState() []*event {
	if wc.sorted == nil {
		s := make([]*event, 0, len(wc.state))
		for _, e := range wc.state {
			s = append(s, e)
		}
		slices.SortFunc(s, func(a, b *event) int { return strings.Compare(a.key, b.key) })
		wc.sorted = s
	}
	return wc.sorted
}
