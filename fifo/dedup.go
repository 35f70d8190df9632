package fifo

// dedupDeltas collapses the two newest deltas when they describe the same
// event, and returns the (possibly shorter) list.
//
// Only a pair of Deleted deltas counts as the same event: a watch DELETED
// and a re-list that no longer has the object (its tombstone) report one
// deletion twice, and a consumer must not be told twice. Two Updated deltas
// are kept, since each is a distinct version the consumer may care about,
// and an Added after a Deleted is a re-creation, not a duplicate.
func dedupDeltas(d Deltas) Deltas {
	n := len(d)
	if n < 2 {
		return d
	}
	newer, older := d[n-1], d[n-2]
	if newer.Type != Deleted || older.Type != Deleted {
		return d
	}
	// Keep the one that says more: a real final state beats a tombstone
	// whose state may be stale. Between two real ones keep the first.
	if _, olderIsTombstone := older.Object.(DeletedFinalStateUnknown); olderIsTombstone {
		d[n-2] = newer
	}
	d[n-1] = Delta{} // let the dropped object be collected
	return d[:n-1]
}
