package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/narrate"
)

// retryRestartDelay is the RetryWatcher's MinRestartDelay in the tour;
// client-go's is one second.
const retryRestartDelay = 100 * time.Millisecond

// retryWatcher is the chapter of the second article's fix: a RetryWatcher
// resumes from the last resourceVersion across a killed connection,
// missing nothing, and stops with 410 once the server's history no longer
// reaches back to it.
func (t *tour) retryWatcher(ctx context.Context) error {
	t.chapter(chapterRetryWatcher())
	restore := t.spot.focus(retryFocus)
	defer restore()

	ev := newEvidence() // this chapter's own: the informer's is untouched
	cab := newCable("RetryWatcher", t.silent.Resource(configMaps).Namespace(namespace), ev, t.tr)
	rw, from, err := t.startRetryWatcher(ctx, cab, ev)
	if err != nil {
		return err
	}
	defer func() {
		rw.Stop()
		<-rw.Done()
	}()
	wait := func(what string, cond func() bool) error {
		return ev.waitFor(ctx, t.o.StageTimeout, t.here()+": "+what, cond)
	}
	if err := wait("the RetryWatcher watches", func() bool { return ev.watchCount() >= 1 }); err != nil {
		return err
	}
	first, missed, err := t.retryResumes(ctx, cab, ev, wait)
	if err != nil {
		return err
	}
	compacted, err := t.retryStopsOn410(ctx, cab, ev, wait)
	if err != nil {
		return err
	}
	t.check("RetryWatcher: from rv %s, got rv %s, resumed across a killed connection with rv %s "+
		"(written while it was away); after a compaction at rv %d its re-watch got 410 and it stopped",
		from, first, missed, compacted)
	return nil
}

// retryFocus keeps the RetryWatcher chapter's lines: the RetryWatcher, its
// consumer, its connections and the faults.
func retryFocus(layer, line string) bool {
	switch layer {
	case narrate.RetryWatcher, consumerLayer:
		return true
	case networkLayer:
		return strings.Contains(line, "RetryWatcher")
	case narrate.HTTP:
		return strings.HasPrefix(line, "FAULT")
	}
	return false
}

// startRetryWatcher lists, starts a RetryWatcher from the list's
// resourceVersion over cab, and a consumer that records each event it
// gets (and the channel's closing) in ev.
func (t *tour) startRetryWatcher(ctx context.Context, cab *cable, ev *evidence) (*client.RetryWatcher, string, error) {
	list, err := t.writer.List(ctx, api.ListOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("%s: listing: %w", t.here(), err)
	}
	from := list.Metadata.ResourceVersion
	rw, err := client.NewRetryWatcher(ctx, from, cab, client.RetryWatcherOptions{
		MinRestartDelay: retryRestartDelay,
		Tracer:          t.tr,
	})
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", t.here(), err)
	}
	t.tr.Printf(consumerLayer, "NewRetryWatcher from rv %s (the list's); then `for ev := range ResultChan()`", from)
	go func() {
		for e := range rw.ResultChan() {
			t.tr.Printf(consumerLayer, "got %s", describeEvent(e))
			n := note{verb: string(e.Type)}
			if e.Object != nil {
				n.key, n.rv = e.Object.Key(), e.Object.Metadata.ResourceVersion
			}
			ev.record(func() { ev.notes = append(ev.notes, n) })
		}
		t.tr.Printf(consumerLayer, "ResultChan closed: the RetryWatcher gave up; only a new LIST can go on")
		ev.record(func() { ev.notes = append(ev.notes, note{verb: "closed"}) })
	}()
	return rw, from, nil
}

// retryResumes changes the object once while the RetryWatcher watches and
// once while it is away: the second change arrives after the re-watch,
// because it starts from the last resourceVersion. It returns both
// resourceVersions.
func (t *tour) retryResumes(ctx context.Context, cab *cable, ev *evidence, wait func(string, func() bool) error) (first, missed string, err error) {
	o, err := t.writer.Patch(ctx, demoName, client.PatchTypeMerge, dataPatch("retry-1"))
	if err != nil {
		return "", "", fmt.Errorf("%s: changing %s: %w", t.here(), demoKey, err)
	}
	first = o.Metadata.ResourceVersion
	if err := wait("rv "+first+" arrives", func() bool {
		return ev.handled(string(api.Modified), demoKey, first)
	}); err != nil {
		return "", "", err
	}
	missed, err = t.awayWhile(ctx, cab, ev, 1, func() (string, error) {
		o, err := t.writer.Patch(ctx, demoName, client.PatchTypeMerge, dataPatch("retry-2"))
		if err != nil {
			return "", err
		}
		return o.Metadata.ResourceVersion, nil
	})
	if err != nil {
		return "", "", err
	}
	err = wait("rv "+missed+" arrives after the re-watch", func() bool {
		return ev.handled(string(api.Modified), demoKey, missed)
	})
	return first, missed, err
}

// retryStopsOn410 takes the RetryWatcher away while the store is
// compacted: the history from its resourceVersion is gone, the re-watch is
// answered with 410 and it stops, while the informer, watching all along,
// has every change. It returns the revision compacted.
func (t *tour) retryStopsOn410(ctx context.Context, cab *cable, ev *evidence, wait func(string, func() bool) error) (int64, error) {
	var compacted int64
	latest, err := t.awayWhile(ctx, cab, ev, 2, func() (string, error) {
		var o *api.Object
		for i := 3; i <= 5; i++ {
			var err error
			if o, err = t.writer.Patch(ctx, demoName, client.PatchTypeMerge, dataPatch("retry-"+strconv.Itoa(i))); err != nil {
				return "", err
			}
		}
		compacted = t.srv.Faults().CompactNow()
		return o.Metadata.ResourceVersion, nil
	})
	if err != nil {
		return 0, err
	}
	if err := wait("the RetryWatcher stops on 410", func() bool {
		return ev.handled(string(api.Error), "", "") && ev.handled("closed", "", "")
	}); err != nil {
		return 0, err
	}
	return compacted, t.ev.waitFor(ctx, t.o.StageTimeout, t.here()+": the informer has rv "+latest, func() bool {
		return t.ev.handled("update", demoKey, latest)
	})
}

// awayWhile unplugs cab, kills the watch connections, waits until the
// watcher behind cab is waiting for the network for the n-th time, runs
// meanwhile, and plugs the cable back in.
func (t *tour) awayWhile(ctx context.Context, cab *cable, ev *evidence, n int, meanwhile func() (string, error)) (string, error) {
	cab.unplug()
	defer cab.plugIn()
	informerWatches, _ := t.counts()
	if err := t.killWatch(ctx); err != nil {
		return "", err
	}
	err := ev.waitFor(ctx, t.o.StageTimeout, t.here()+": the watcher tries again", func() bool { return ev.waiting >= n })
	if err != nil {
		return "", err
	}
	// The kill reset the informer's watch too; let it watch again before
	// the cluster moves on, so that this side story leaves it as it was.
	err = t.ev.waitFor(ctx, t.o.StageTimeout, t.here()+": the informer watches again", func() bool {
		return t.ev.watchCount() > informerWatches
	})
	if err != nil {
		return "", err
	}
	rv, err := meanwhile()
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.here(), err)
	}
	return rv, nil
}
