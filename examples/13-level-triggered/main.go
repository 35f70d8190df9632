// Command 13-level-triggered runs two controllers side by side on the same
// lossy stream of events and shows why real controllers are
// level-triggered. Both keep a number of "worker" ConfigMaps equal to the
// replicas of the ConfigMap "web". The edge-triggered one acts on what each
// event says changed (old → new: create or delete the difference); the
// level-triggered one only puts the key "default/web" in a workqueue, and
// its worker reads the desired state from the informer's cache, counts
// what exists, and fixes the difference. Some events are dropped, as a
// handler that was down or a buggy filter would miss them: the edge
// controller's count drifts for good; the level controller is right after
// the next event, or the next resync, whatever it missed.
//
//	go run ./examples/13-level-triggered
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/workqueue"
)

func main() {
	changes := flag.String("changes", "1,3,5,2", "the replicas of web, in order (the first creates it)")
	drop := flag.String("drop", "3,2", "drop the events that set replicas to these values")
	resync := flag.Duration("resync", 2*time.Second, "the informer's resync period (at least 1s)")
	trace := flag.Bool("trace", false, "narrate the workqueue and every layer")
	flag.Parse()
	steps, err := ints(*changes)
	if err != nil || len(steps) == 0 {
		demo.Fail(fmt.Errorf("-changes: want a comma-separated list of counts: %v", err))
	}
	dropped, err := ints(*drop)
	if err != nil {
		demo.Fail(fmt.Errorf("-drop: %w", err))
	}
	if *resync < time.Second {
		demo.Fail(fmt.Errorf("-resync must be at least 1s"))
	}
	if err := run(demo.NewPrinter(os.Stdout), steps, dropped, *resync, demo.Tracer(*trace)); err != nil {
		demo.Fail(err)
	}
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

const desired = "web"

func replicasOf(o *api.Object) int {
	n, _ := strconv.Atoi(demo.Data(o, "replicas"))
	return n
}

func run(p *demo.Printer, steps, dropped []int, resync time.Duration, tr *narrate.Tracer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, cms, stop, err := demo.Start(ctx, apiserver.Config{}, client.Config{})
	if err != nil {
		return err
	}
	defer stop()

	// Both handlers get a resync every period: old and new at the same
	// resourceVersion, a reminder, not a change.
	inf, err := informer.NewSharedIndexInformer(cms, informer.Options{ResyncPeriod: resync})
	if err != nil {
		return err
	}
	// lossy decides, once per event of web, whether the controllers hear
	// about it. Resyncs (same resourceVersion) are never dropped.
	lossy := func(old, obj *api.Object) bool {
		if obj.Metadata.Name != desired || !isChange(old, obj) {
			return false
		}
		return slices.Contains(dropped, replicasOf(obj))
	}

	// The edge-triggered controller: acts on the change an event reports.
	var edgeSeen atomic.Int64
	edge := func(old, obj *api.Object) {
		if obj.Metadata.Name != desired {
			return
		}
		if isChange(old, obj) {
			// Counted once acted on: settle waits for it.
			defer edgeSeen.Add(1)
		}
		if lossy(old, obj) {
			return
		}
		from := 0
		if old != nil {
			from = replicasOf(old)
		}
		diff := replicasOf(obj) - from
		if diff != 0 {
			p.Say("edge", "event says %d → %d: %s", from, replicasOf(obj), verb(diff))
		}
		if err := scaleBy(ctx, cms, "edge", diff); err != nil {
			p.Say("edge", "error: %v", err)
		}
	}
	if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc:    func(obj *api.Object, _ bool) { edge(nil, obj) },
		UpdateFunc: edge,
	}); err != nil {
		return err
	}

	// The level-triggered controller: any event only queues the key.
	q := workqueue.NewRateLimiting[string](workqueue.Config{Name: "level", Tracer: tr}, nil)
	defer q.ShutDown()
	var levelSeen atomic.Int64
	level := func(old, obj *api.Object) {
		if obj.Metadata.Name != desired {
			return
		}
		if isChange(old, obj) {
			defer levelSeen.Add(1)
		}
		if !lossy(old, obj) {
			q.Add(obj.Key())
		}
	}
	if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc:    func(obj *api.Object, _ bool) { level(nil, obj) },
		UpdateFunc: level,
	}); err != nil {
		return err
	}
	var reconciled atomic.Int64
	reconcile := func(key string) error {
		defer reconciled.Add(1)
		obj, ok := inf.GetIndexer().GetByKey(key) // the state, from the cache
		if !ok {
			return nil
		}
		have, err := count(ctx, cms, "level")
		if err != nil {
			return err
		}
		diff := replicasOf(obj) - have
		p.Say("level", "reconcile %s: want %d, have %d: %s", key, replicasOf(obj), have, verb(diff))
		return scaleBy(ctx, cms, "level", diff)
	}
	go func() {
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			if err := reconcile(key); err != nil {
				q.AddRateLimited(key)
			} else {
				q.Forget(key)
			}
			q.Done(key)
		}
	}()

	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if !informer.WaitForCacheSync(ctx, inf) {
		return fmt.Errorf("the informer did not sync")
	}

	// settle waits until both handlers have handled n changes of web (a
	// resync, which may come at any time on a slow machine, is not one)
	// and the level controller's queue is idle. The deadline only bounds
	// a run that is broken.
	settle := func(n int64) error {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			m := q.Metrics()
			if edgeSeen.Load() >= n && levelSeen.Load() >= n && m.Depth == 0 && m.InProgress == 0 {
				return nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		return fmt.Errorf("the controllers did not settle")
	}

	p.Section("1. the replicas of web change; some of those events never reach the controllers")
	for i, n := range steps {
		note := "delivered"
		if i > 0 && slices.Contains(dropped, n) {
			note = "DROPPED"
		}
		obj := demo.ConfigMap(desired, map[string]string{"replicas": strconv.Itoa(n)}, nil)
		// Each change is told before it is written: the controllers react
		// to the write at once, and a cause must print before its effects.
		if i == 0 {
			p.Say("change", "create web, replicas %d (event %s)", n, note)
			_, err = cms.Create(ctx, obj)
		} else {
			cur, gerr := cms.Get(ctx, desired)
			if gerr != nil {
				return gerr
			}
			obj.Metadata.ResourceVersion = cur.Metadata.ResourceVersion
			p.Say("change", "web replicas %d → %d (event %s)", steps[i-1], n, note)
			_, err = cms.Update(ctx, obj)
		}
		if err != nil {
			return err
		}
		if err := settle(int64(i + 1)); err != nil {
			return err
		}
	}
	want := steps[len(steps)-1]
	edgeHave, err := count(ctx, cms, "edge")
	if err != nil {
		return err
	}
	levelHave, err := count(ctx, cms, "level")
	if err != nil {
		return err
	}
	p.Say("state", "web wants %d; edge-triggered has %d, level-triggered has %d", want, edgeHave, levelHave)

	p.Section("2. nothing changes; the resync re-delivers web (same resourceVersion)")
	before := reconciled.Load()
	deadline := time.Now().Add(resync*3 + time.Minute) // bounds a broken run only
	for levelHave != want || reconciled.Load() == before {
		if time.Now().After(deadline) {
			return fmt.Errorf("no resync arrived within %v", resync*3+time.Minute)
		}
		time.Sleep(20 * time.Millisecond)
		if levelHave, err = count(ctx, cms, "level"); err != nil {
			return err
		}
	}
	if edgeHave, err = count(ctx, cms, "edge"); err != nil {
		return err
	}
	p.Say("result", "web wants %d: edge-triggered has %d (%s), level-triggered has %d (right)",
		want, edgeHave, rightOrWrong(edgeHave == want), levelHave)
	demo.Check(levelHave == want, "the level-triggered controller has %d workers, want %d", levelHave, want)
	return nil
}

// isChange tells an event that changed web from a resync, which hands the
// handlers the object they already have (the same resourceVersion).
func isChange(old, obj *api.Object) bool {
	return old == nil || old.Metadata.ResourceVersion != obj.Metadata.ResourceVersion
}

func rightOrWrong(ok bool) string {
	if ok {
		return "right, by luck"
	}
	return "wrong for good: no later event carries what it missed"
}

func verb(diff int) string {
	switch {
	case diff > 0:
		return fmt.Sprintf("create %d", diff)
	case diff < 0:
		return fmt.Sprintf("delete %d", -diff)
	}
	return "nothing to do"
}

// count counts a controller's workers on the server.
func count(ctx context.Context, cms *client.ResourceClient, who string) (int, error) {
	l, err := cms.List(ctx, api.ListOptions{LabelSelector: "controller=" + who})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

// scaleBy creates or deletes diff workers of a controller.
func scaleBy(ctx context.Context, cms *client.ResourceClient, who string, diff int) error {
	for ; diff > 0; diff-- {
		w := demo.ConfigMap("", nil, map[string]string{"controller": who})
		w.Metadata.GenerateName = who + "-worker-"
		if _, err := cms.Create(ctx, w); err != nil {
			return err
		}
	}
	if diff == 0 {
		return nil
	}
	l, err := cms.List(ctx, api.ListOptions{LabelSelector: "controller=" + who})
	if err != nil {
		return err
	}
	for i := 0; i < -diff && i < len(l.Items); i++ {
		if err := cms.Delete(ctx, l.Items[i].Metadata.Name, client.DeleteOptions{}); err != nil && !client.IsNotFound(err) {
			return err
		}
	}
	return nil
}
