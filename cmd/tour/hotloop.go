package main

import (
	"context"
	"fmt"
	"time"

	"listwatch/api"
	"listwatch/apiserver/faults"
	"listwatch/client"
)

// consumerLayer tags the lines of the tour's own watch loops: code like
// the articles', reading a watch's ResultChan.
const consumerLayer = "consumer"

// spinWindow is how long the tour lets the `continue` loop spin, and
// spinReports how many times it reads the counter meanwhile.
const (
	spinWindow  = 200 * time.Millisecond
	spinReports = 4
)

// hotLoop is the chapter of the first article's second attempt: the
// channel closed, and the loop says `continue`. It runs that loop on a
// real watch, lets it spin for spinWindow while printing its counter,
// then shows the fix: return, and watch again from the last
// resourceVersion.
func (t *tour) hotLoop(ctx context.Context) error {
	t.chapter(chapterContinue())
	restore := t.spot.focus(layers(consumerLayer))
	defer restore()

	cms := t.silent.Resource(configMaps).Namespace(namespace)
	list, err := cms.List(ctx, api.ListOptions{})
	if err != nil {
		return fmt.Errorf("%s: listing: %w", t.here(), err)
	}
	from := list.Metadata.ResourceVersion
	w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: from})
	if err != nil {
		return fmt.Errorf("%s: watching: %w", t.here(), err)
	}
	defer w.Stop()
	t.tr.Printf(consumerLayer, "watch from rv %s; the server ends it once our change is in (a real server: after 30-60 min)", from)
	if _, err := t.writer.Patch(ctx, demoName, client.PatchTypeMerge, dataPatch("continue")); err != nil {
		return fmt.Errorf("%s: changing %s: %w", t.here(), demoKey, err)
	}

	lastRV, spins := t.continueLoop(ctx, w.ResultChan(), t.timeOut)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if lastRV == "" || spins == 0 {
		return fmt.Errorf("%s: the `continue` loop saw no event (last rv %q) or never spun", t.here(), lastRV)
	}
	t.tr.Printf(consumerLayer, "for ever, on one core: nothing will ever arrive on a closed channel")

	// The fix: on !ok, leave the loop and watch again from where we were.
	t.tr.Printf(consumerLayer, "the fix: on !ok, return; watch again from the last rv, %s", lastRV)
	w2, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: lastRV})
	if err != nil {
		return fmt.Errorf("%s: watching again: %w", t.here(), err)
	}
	defer w2.Stop()
	changed, err := t.writer.Patch(ctx, demoName, client.PatchTypeMerge, dataPatch("fixed"))
	if err != nil {
		return fmt.Errorf("%s: changing %s: %w", t.here(), demoKey, err)
	}
	got := ""
	for ev := range w2.ResultChan() {
		t.tr.Printf(consumerLayer, "got %s", describeEvent(ev))
		if ev.Object != nil {
			got = ev.Object.Metadata.ResourceVersion
		}
		if got == changed.Metadata.ResourceVersion {
			t.timeOut()
		}
	}
	if got != changed.Metadata.ResourceVersion {
		return fmt.Errorf("%s: the re-watch from rv %s did not deliver rv %s", t.here(), lastRV, changed.Metadata.ResourceVersion)
	}
	t.tr.Printf(consumerLayer, "closed again at the timeout: return, and watch again from rv %s", got)
	t.check("`continue` on a closed channel spun %s times in %v and got nothing; "+
		"re-watching from rv %s got rv %s", thousands(spins), spinWindow, lastRV, got)
	return nil
}

// timeOut stands for the half hour a real server lets a watch run: it
// makes the timeout of the consumer's own watch pass now, through the
// server's timer path (the expire fault, scoped to the consumer's user
// agent so that the informer's watch goes on). The tour calls it once the
// event it wrote has arrived, so a busy machine cannot end the watch
// before the event, as a one-second timeout could.
func (t *tour) timeOut() {
	t.srv.Faults().ExpireWatchesIn(faults.WatchScope{UserAgent: consumerAgent})
}

// continueLoop is the first article's loop after its "fix", in Go:
//
//	for {
//		select {
//		case event, ok := <-ch:
//			if !ok {
//				log("Watcher channel closed")
//				continue
//			}
//			handle(event)
//		}
//	}
//
// It handles the events, and once the channel is closed it spins,
// counting, for spinWindow, printing the counter spinReports times. It
// returns the last resourceVersion it handled and the number of spins.
// After each event, halfAnHour lets the server's timeout end the watch.
func (t *tour) continueLoop(ctx context.Context, ch <-chan api.Event, halfAnHour func()) (lastRV string, spins int64) {
	var sc spinCounter
	for {
		select {
		case <-ctx.Done():
			return lastRV, sc.n
		case ev, ok := <-ch:
			if !ok {
				if !t.spin(&sc) {
					return lastRV, sc.n
				}
				continue // the article's loop: a closed channel is ready again at once
			}
			t.tr.Printf(consumerLayer, "got %s", describeEvent(ev))
			if ev.Object != nil {
				lastRV = ev.Object.Metadata.ResourceVersion
			}
			halfAnHour() // the server's timeout ends the watch
		}
	}
}

// spinCounter counts continueLoop's receives from the closed channel.
type spinCounter struct {
	closedAt time.Time     // the first receive from the closed channel
	next     time.Duration // when, after closedAt, to print the counter next
	n        int64
}

// spin counts one receive from the closed channel, printing the counter
// spinReports times over spinWindow; it returns false once spinWindow has
// passed.
func (t *tour) spin(c *spinCounter) bool {
	if c.closedAt.IsZero() {
		c.closedAt = time.Now()
		c.next = spinWindow / spinReports
		t.tr.Printf(consumerLayer, "ResultChan closed (the timeout); the loop says `continue`")
	}
	c.n++
	if c.n%1024 != 0 && c.n >= 1024 {
		return true // the clock is read only now and then: the spinning is the point
	}
	if time.Since(c.closedAt) < c.next {
		return true
	}
	t.tr.Printf(consumerLayer, "spin counter: %13s receives from a closed channel in %v", thousands(c.n), c.next)
	if c.next >= spinWindow {
		return false
	}
	c.next += spinWindow / spinReports
	return true
}

// describeEvent is an event on one short line.
func describeEvent(ev api.Event) string {
	switch {
	case ev.Status != nil:
		return fmt.Sprintf("%s %d %s", ev.Type, ev.Status.Code, ev.Status.Reason)
	case ev.Object == nil:
		return string(ev.Type)
	case ev.Object.Metadata.Name == "":
		return fmt.Sprintf("%s rv=%s", ev.Type, ev.Object.Metadata.ResourceVersion)
	}
	return fmt.Sprintf("%s %s rv=%s", ev.Type, ev.Object.Key(), ev.Object.Metadata.ResourceVersion)
}

// thousands writes n with commas: 1,234,567.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
