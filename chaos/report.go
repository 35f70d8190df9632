package chaos

import (
	"fmt"
	"strings"
	"time"
)

// Report is what a run did and found.
type Report struct {
	// Seed reproduces the run's writes and fault schedule.
	Seed uint64
	// Duration is how long the writers wrote and the faults fired.
	Duration time.Duration
	// ConvergedAfter is how long after the writers stopped every informer
	// and handler had reached the server's final state (0 if they never
	// did within Config.ConvergenceTimeout).
	ConvergedAfter time.Duration

	// Writes are the writes the writers made, by kind, and the requests
	// they had to repeat because a fault refused them.
	Creates, Updates, Deletes, WriteRetries int64
	// Events is how many changes the store committed (the ground truth,
	// recorded by watching the store directly).
	Events int64
	// FinalObjects is how many ConfigMaps existed at the end.
	FinalObjects int
	// WatchEvents is how many ADDED, MODIFIED and DELETED events the
	// informers received from their watches, all informers together.
	WatchEvents int64
	// Notifications is how many handler calls were made, all handlers
	// together.
	Notifications int64
	// Reconnects is how many watch requests the informers made; Relists
	// how many lists (a paged list counts once).
	Reconnects, Relists int64
	// Tombstones is how many deletions handlers learned of only at a
	// re-list (OnDelete with a DeletedFinalStateUnknown).
	Tombstones int64

	// Faults is how often each fault was injected.
	Faults map[FaultKind]int64
	// What the server saw: watchers it closed as too slow (and how many of
	// those the slow-watcher fault provoked), 410 Expired answers (in a
	// watch stream or to a list or continue token), watch connections the
	// kill fault dropped, and requests refused by the 429/403 fault.
	ClosedTooSlow, SlowWatcherClosures, Expired, WatchesKilled, RefusedRequests int64

	// Informers describes each informer.
	Informers []InformerReport
	// Divergences lists everything the checker found wrong, one line
	// each; empty when the run passed.
	Divergences []string
}

// InformerReport is what one informer went through.
type InformerReport struct {
	Name    string
	Variant string
	// Lists and Watches are its list (re-list) and watch (reconnect)
	// requests; WatchEvents the events it received.
	Lists, Watches, WatchEvents int64
	// Adds, Updates, Deletes and Tombstones are its fast handler's
	// notifications.
	Adds, Updates, Deletes, Tombstones int64
	// LastSyncResourceVersion is where it ended.
	LastSyncResourceVersion string
}

// Passed reports whether the run found no divergence.
func (r Report) Passed() bool { return len(r.Divergences) == 0 }

// String is the report as a few aligned lines.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed           %d\n", r.Seed)
	fmt.Fprintf(&b, "duration       %v of writes and faults; converged %v after the writers stopped\n",
		r.Duration.Round(time.Millisecond), r.ConvergedAfter.Round(time.Millisecond))
	fmt.Fprintf(&b, "writes         %d creates, %d updates, %d deletes (%d retried after a fault)\n",
		r.Creates, r.Updates, r.Deletes, r.WriteRetries)
	fmt.Fprintf(&b, "events         %d committed; %d objects at the end\n", r.Events, r.FinalObjects)
	fmt.Fprintf(&b, "informers      %d watch events received, %d notifications, %d tombstones\n",
		r.WatchEvents, r.Notifications, r.Tombstones)
	fmt.Fprintf(&b, "reconnects     %d watch requests, %d relists\n", r.Reconnects, r.Relists)
	fmt.Fprintf(&b, "faults        ")
	for _, k := range FaultKinds() {
		fmt.Fprintf(&b, " %s=%d", k, r.Faults[k])
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "server saw     %d watchers closed too slow (%d of them by the slow-watcher fault), %d × 410 Expired, %d watches killed, %d requests refused (429/403)\n",
		r.ClosedTooSlow, r.SlowWatcherClosures, r.Expired, r.WatchesKilled, r.RefusedRequests)
	for _, ir := range r.Informers {
		fmt.Fprintf(&b, "  %-11s %s\n", ir.Name, ir.Variant)
		fmt.Fprintf(&b, "              lists=%d watches=%d events=%d adds=%d updates=%d deletes=%d tombstones=%d rv=%s\n",
			ir.Lists, ir.Watches, ir.WatchEvents, ir.Adds, ir.Updates, ir.Deletes, ir.Tombstones, ir.LastSyncResourceVersion)
	}
	fmt.Fprintf(&b, "divergences    %d\n", len(r.Divergences))
	for i, d := range r.Divergences {
		if i == 50 {
			fmt.Fprintf(&b, "  ... %d more\n", len(r.Divergences)-i)
			break
		}
		fmt.Fprintf(&b, "  %s\n", d)
	}
	return b.String()
}
