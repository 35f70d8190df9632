// Command 05-retrywatcher-410 shows where RetryWatcher must give up, and
// why an informer does not.
//
// A re-watch resumes from a resourceVersion, and that only works while the
// server still has the history after it. kube-apiserver's watch cache keeps
// a window of recent events (about 75 seconds), and etcd compacts older
// revisions every five minutes. A client that is away for longer (a
// partition, a laptop asleep, a stalled process) comes back with a
// resourceVersion the server can no longer replay from, and gets 410 Gone
// ("Expired: too old resource version"). RetryWatcher cannot recover from
// that: it forwards the ERROR and stops, because whatever it did next would
// either skip changes or repeat them. A Reflector (inside every informer)
// does what is left to do: it lists again, and compares.
//
//	go run ./examples/05-retrywatcher-410
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/reflector"
)

func main() {
	history := flag.Int("history", 20, "how many events the server's watch cache keeps (kube-apiserver: about 75 s worth)")
	changes := flag.Int("changes", 30, "how many changes happen while the clients are disconnected")
	compact := flag.Bool("compact", true, "compact the store while the clients are away (our CompactNow fault also trims the watch cache)")
	trace := flag.Bool("trace", false, "narrate every layer")
	flag.Parse()
	if *history < 1 || *changes < 1 {
		demo.Fail(fmt.Errorf("-history and -changes must be positive"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, *history, *changes, *compact, *trace); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, history, changes int, compact, trace bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := demo.Tracer(trace)
	srv, cms, stop, err := demo.Start(ctx, apiserver.Config{EnableFaults: true, HistorySize: history, Tracer: tr}, client.Config{Tracer: tr})
	if err != nil {
		return err
	}
	defer stop()
	p.Say("server", "our apiserver on %s; its watch cache keeps the last %d events", srv.URL(), history)

	created, err := cms.Create(ctx, demo.ConfigMap("demo", map[string]string{"n": "0"}, nil))
	if err != nil {
		return err
	}
	startRV := created.Metadata.ResourceVersion

	// Two clients, each behind its own network cable.
	retryCable, informerCable := demo.NewCable(cms), demo.NewCable(cms)

	// 1. A RetryWatcher from the create's resourceVersion. Without -trace
	// its own narration is printed anyway: that is what we came to see.
	rtr := tr
	if rtr == nil {
		rtr = narrate.New(os.Stdout, narrate.WithoutTimes(), narrate.WithFilter(func(layer, _ string) bool {
			return layer == narrate.RetryWatcher
		}))
	}
	rw, err := client.NewRetryWatcher(ctx, startRV, retryCable, client.RetryWatcherOptions{Tracer: rtr})
	if err != nil {
		return err
	}
	defer func() { rw.Stop(); <-rw.Done() }()

	// 2. An informer. Its Reflector's narration, minus the events the
	// handler prints anyway, is printed too.
	itr := tr
	if itr == nil {
		itr = narrate.New(os.Stdout, narrate.WithoutTimes(), narrate.WithFilter(func(layer, line string) bool {
			return layer == narrate.Reflector && !strings.Contains(line, "event ")
		}))
	}
	inf, err := informer.NewSharedIndexInformer(informerCable, informer.Options{
		Tracer: itr,
		Reflector: reflector.Options{
			// A LIST, as the articles' informer made, so the re-list is
			// a visible line (the default streams it: watch-list).
			InitialList: reflector.ListThenWatch,
			// Quick retries, so the example does not wait for the
			// production backoff (0.8 s doubling to 30 s).
			Backoff: reflector.Backoff{Initial: 100 * time.Millisecond, Max: 500 * time.Millisecond},
		},
	})
	if err != nil {
		return err
	}
	updates := make(chan *api.Object, 100)
	added := make(chan struct{}, 1)
	_, err = inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, initial bool) {
			p.Say("informer", "OnAdd    %s rv=%s n=%s (initial list: %v)", obj.Metadata.Name, obj.Metadata.ResourceVersion, demo.Data(obj, "n"), initial)
			select {
			case added <- struct{}{}:
			default:
			}
		},
		UpdateFunc: func(old, obj *api.Object) {
			p.Say("informer", "OnUpdate %s rv %s→%s, n %s→%s", obj.Metadata.Name,
				old.Metadata.ResourceVersion, obj.Metadata.ResourceVersion, demo.Data(old, "n"), demo.Data(obj, "n"))
			updates <- obj
		},
	})
	if err != nil {
		return err
	}
	informerDone := make(chan struct{})
	go func() { inf.Run(ctx); close(informerDone) }()
	defer func() { cancel(); <-informerDone }()
	if !informer.WaitForCacheSync(ctx, inf) {
		return fmt.Errorf("the informer did not sync")
	}
	// The handler hears of the list after the cache has it; wait for it,
	// so that its OnAdd is printed before the first change.
	select {
	case <-added:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the informer's handler was not told about the list")
	}

	p.Section("1. connected: both clients see every change")
	for n := 1; n <= 3; n++ {
		// Printed before the write: the handlers can be told about it
		// before the write's response is even read.
		p.Say("change", "update demo: n=%d", n)
		obj, err := update(ctx, cms, n)
		if err != nil {
			return err
		}
		if err := retryEvent(p, rw, obj.Metadata.ResourceVersion); err != nil {
			return err
		}
		if err := informerUpdate(updates, obj.Metadata.ResourceVersion); err != nil {
			return err
		}
	}

	p.Section("2. disconnected: %d changes happen while neither client is watching", changes)
	retryCable.Unplug()
	informerCable.Unplug()
	killed := srv.Faults().KillWatchConnections()
	p.Say("fault", "network down, and KillWatchConnections reset %d watch connection(s)", killed)
	p.Say("change", "update demo %d times: n=4 … n=%d", changes, 3+changes)
	var last *api.Object
	for n := 4; n < 4+changes; n++ {
		if last, err = update(ctx, cms, n); err != nil {
			return err
		}
	}
	p.Say("change", "demo is now at rv %s", last.Metadata.ResourceVersion)
	if compact {
		// Unlike kube-apiserver, whose watch cache outlives an etcd
		// compaction, our CompactNow switch makes every older watch 410 too,
		// so a workshop can force the case on demand.
		compacted := srv.Faults().CompactNow()
		p.Say("fault", "CompactNow: the history before rv %d is gone, from the store and from the watch cache", compacted)
	}
	if oldest, err := oldestReplayable(ctx, srv.URL()); err == nil {
		p.Say("server", "/debug/listwatch: the configmaps watch cache can replay from rv %d on; older resourceVersions get 410", oldest)
	}

	p.Section("3. reconnected: both try to resume from the last resourceVersion they saw")
	retryCable.Plug()
	informerCable.Plug()
	p.Say("fault", "network back")

	// The RetryWatcher resumes from the last resourceVersion it delivered:
	// either the server can replay from there, or it answers 410.
	var gone *api.Status
	resumed := 0
	timeout := time.After(15 * time.Second)
	for gone == nil && resumed < changes {
		select {
		case ev, ok := <-rw.ResultChan():
			if !ok {
				return fmt.Errorf("the RetryWatcher stopped without an ERROR event")
			}
			if ev.Type == api.Error {
				gone = ev.Status
				p.Say("retry", "ERROR %d %s: %s", gone.Code, gone.Reason, gone.Message)
				continue
			}
			resumed++
			if resumed <= 2 || resumed == changes {
				p.Say("retry", "%-8s %s rv=%s n=%s", ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion, demo.Data(ev.Object, "n"))
			} else if resumed == 3 {
				p.Say("retry", "...")
			}
		case <-timeout:
			return fmt.Errorf("the RetryWatcher neither resumed nor got 410 within 15s")
		}
	}
	if gone != nil {
		if _, ok := <-rw.ResultChan(); !ok {
			p.Say("retry", "ResultChan closed: the RetryWatcher has stopped for good; %d changes are lost to it", changes)
		}
	} else {
		p.Say("retry", "resumed and delivered all %d changes: the server's window still covered the outage", changes)
	}

	// The informer's Reflector re-watches, gets 410, lists, and its
	// handler sees the new state in one step.
	var got *api.Object
	seen := 0
	for got == nil || got.Metadata.ResourceVersion != last.Metadata.ResourceVersion {
		select {
		case got = <-updates:
			seen++
		case <-time.After(15 * time.Second):
			return fmt.Errorf("the informer did not catch up within 15s")
		}
	}
	cached, _ := inf.GetIndexer().GetByKey("default/demo")
	p.Say("informer", "cache has demo at rv %s, n=%s: the same as the server", cached.Metadata.ResourceVersion, demo.Data(cached, "n"))
	if gone != nil {
		p.Say("result", "RetryWatcher: 410, stopped (it only knows how to resume, and there was nothing to resume from)")
	} else {
		p.Say("result", "RetryWatcher: resumed, because the %d changes fit in the watch cache's %d events (try -history %d)", changes, history, changes/2)
	}
	if seen == 1 {
		p.Say("result", "informer: re-listed and caught up; its handler saw one update for %d changes: a list has states, not history", changes)
	} else {
		p.Say("result", "informer: resumed too, and its handler saw all %d updates", seen)
	}

	if gone != nil {
		demo.Check(gone.Code == http.StatusGone, "the RetryWatcher stopped with %d, not 410", gone.Code)
	}
	// Whether the cache keeps the last `history` events or a few more
	// before it trims, an outage of far more changes cannot be replayed.
	demo.Check(gone != nil || history >= changes, "the RetryWatcher resumed although %d changes overflowed a history of %d", changes, history)
	demo.Check(cached.Metadata.ResourceVersion == last.Metadata.ResourceVersion, "the informer's cache is at rv %s, the server at %s",
		cached.Metadata.ResourceVersion, last.Metadata.ResourceVersion)
	return nil
}

func update(ctx context.Context, cms *client.ResourceClient, n int) (*api.Object, error) {
	return cms.Update(ctx, demo.ConfigMap("demo", map[string]string{"n": strconv.Itoa(n)}, nil))
}

// retryEvent waits for the RetryWatcher to deliver rv, printing what comes.
func retryEvent(p *demo.Printer, rw *client.RetryWatcher, rv string) error {
	for {
		select {
		case ev, ok := <-rw.ResultChan():
			if !ok {
				return fmt.Errorf("the RetryWatcher stopped")
			}
			if ev.Type == api.Error {
				return fmt.Errorf("the RetryWatcher got ERROR %d %s", ev.Status.Code, ev.Status.Message)
			}
			p.Say("retry", "%-8s %s rv=%s n=%s", ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion, demo.Data(ev.Object, "n"))
			if ev.Object.Metadata.ResourceVersion == rv {
				return nil
			}
		case <-time.After(10 * time.Second):
			return fmt.Errorf("the RetryWatcher did not deliver rv %s within 10s", rv)
		}
	}
}

// informerUpdate waits for the informer's handler to see rv.
func informerUpdate(updates <-chan *api.Object, rv string) error {
	for {
		select {
		case obj := <-updates:
			if obj.Metadata.ResourceVersion == rv {
				return nil
			}
		case <-time.After(10 * time.Second):
			return fmt.Errorf("the informer did not see rv %s within 10s", rv)
		}
	}
}

// oldestReplayable reads the debug view, GET /debug/listwatch, for the
// oldest revision the configmaps watch cache can still replay from.
func oldestReplayable(ctx context.Context, base string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/debug/listwatch", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var view struct {
		WatchCaches []struct {
			Resource string `json:"resource"`
			Oldest   int64  `json:"oldestReplayableRevision"`
		} `json:"watchCaches"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&view); err != nil {
		return 0, err
	}
	for _, c := range view.WatchCaches {
		if c.Resource == "configmaps" {
			return c.Oldest, nil
		}
	}
	return 0, fmt.Errorf("no configmaps watch cache in the debug view")
}
