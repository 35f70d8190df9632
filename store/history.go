package store

import "fmt"

// history is the store's event log: the events of revisions first, first+1,
// ..., up to the current revision, oldest first, in a ring that grows on
// demand up to limit events, holding at most maxBytes of objects (by
// api.Object.Size; the newest event is always kept, however large).
//
// Every write makes exactly one revision and one event, so revisions in the
// log are dense and the event of revision r sits at a fixed offset from the
// oldest one: no search is needed to start a watch or undo a revision. This
// is what etcd's MVCC keeps as its key-revision index; a toy can afford to
// keep whole events instead.
type history struct {
	buf   []Event
	sizes []int64 // sizes[i] is the charged size of buf[i]
	head  int     // index in buf of the oldest event
	n     int     // number of events held
	first int64   // revision of the oldest event, or of the next one if n == 0
	limit int
	// bytes is the sum of the held events' sizes; maxBytes bounds it.
	bytes, maxBytes int64
}

func newHistory(limit int, maxBytes, first int64) *history {
	return &history{limit: limit, maxBytes: maxBytes, first: first}
}

// eventSize is what an event is charged: its new object. The previous
// object is the one an older event (or the current state) already holds.
func eventSize(ev *Event) int64 { return ev.Object.Size() }

// next is the revision the next appended event must carry.
func (h *history) next() int64 { return h.first + int64(h.n) }

// at returns the event of revision rev; the caller ensures it is held.
func (h *history) at(rev int64) *Event {
	return &h.buf[(h.head+int(rev-h.first))%len(h.buf)]
}

// append adds the event of the next revision. If the log is at its limit in
// events or would pass its limit in bytes, it first drops the oldest events
// and reports the revision of the newest one dropped (0 if nothing was
// dropped): that is automatic compaction.
func (h *history) append(ev Event) (dropped int64) {
	if ev.Revision != h.next() {
		// A broken invariant here would silently corrupt every watch; fail
		// loudly in tests rather than deliver a gap.
		panic(fmt.Sprintf("store: history append of revision %d, want %d", ev.Revision, h.next()))
	}
	size := eventSize(&ev)
	for h.n > 0 && (h.n == h.limit || h.bytes+size > h.maxBytes) {
		dropped = h.first
		h.dropOldest(1)
	}
	if h.n == len(h.buf) {
		h.grow()
	}
	i := (h.head + h.n) % len(h.buf)
	h.buf[i], h.sizes[i] = ev, size
	h.bytes += size
	h.n++
	return dropped
}

// dropThrough drops every event with revision <= rev.
func (h *history) dropThrough(rev int64) {
	if k := rev - h.first + 1; k > 0 {
		h.dropOldest(int(min(k, int64(h.n))))
		h.first = max(h.first, rev+1)
	}
}

func (h *history) dropOldest(k int) {
	for i := 0; i < k; i++ {
		// Clear the slot so the dropped objects can be garbage collected.
		j := (h.head + i) % len(h.buf)
		h.buf[j] = Event{}
		h.bytes -= h.sizes[j]
		h.sizes[j] = 0
	}
	if len(h.buf) > 0 {
		h.head = (h.head + k) % len(h.buf)
	}
	h.n -= k
	h.first += int64(k)
}

// grow doubles the ring (up to limit), unrolling it so head is 0 again.
func (h *history) grow() {
	size := min(max(2*len(h.buf), 64), h.limit)
	buf := make([]Event, size)
	sizes := make([]int64, size)
	for i := 0; i < h.n; i++ {
		j := (h.head + i) % len(h.buf)
		buf[i], sizes[i] = h.buf[j], h.sizes[j]
	}
	h.buf, h.sizes, h.head = buf, sizes, 0
}
