// Command 04-rewatch shows the right fix for a watch channel that closes:
// watch again, from the resourceVersion of the last event you handled. The
// server keeps a window of recent history (the watch cache), so a watch
// that resumes from where the last one stopped gets every change made in
// between, exactly once.
//
// It runs three consumers through the same storm: the server ends each
// watch after a second (its timeout, 30-60 minutes in production), and
// once the connection is killed outright (the first article's tcpkill):
//
//  1. a hand-written re-watch loop, the first article's final version done
//     right;
//
//  2. client.RetryWatcher, which is that loop, packaged (the second
//     article's answer, client-go's tools/watch.RetryWatcher);
//
//  3. the second article's RetryWatcher with a WatchFunc that ignores the
//     options it is given, so every re-watch starts "from now": replays
//     and lost changes.
//
//     go run ./examples/04-rewatch
//
// Against a shared apiserver (the workshop's), in a namespace of your own,
// it kills the watches through the server's /faults/kill-watches and leaves
// the server's own watch timeout alone:
//
//	go run ./examples/04-rewatch -server http://127.0.0.1:8080 -namespace alice
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/internal/target"
	"listwatch/narrate"
)

// settings are the flags.
type settings struct {
	timeout  time.Duration
	changes  int
	interval time.Duration
	kill     bool
	only     int
	restart  time.Duration
	target   target.Flags
}

func main() {
	var s settings
	flag.DurationVar(&s.timeout, "timeout", time.Second, "the server ends every watch after this long (its default watch timeout)")
	flag.IntVar(&s.changes, "changes", 12, "how many changes each consumer must see")
	flag.DurationVar(&s.interval, "interval", 250*time.Millisecond, "time between changes")
	flag.BoolVar(&s.kill, "kill", true, "kill the watch connection halfway through (the article's tcpkill)")
	// Longer than the server's one-second watches, so that there is a gap
	// between one watch and the next, as there is whenever a re-watch
	// has to wait: parts 1 and 2 replay the gap, part 3 loses it.
	flag.DurationVar(&s.restart, "restart-delay", 2*client.DefaultMinRestartDelay,
		"least time from the start of one watch to the start of the next (client-go's RetryWatcher: 1s)")
	flag.IntVar(&s.only, "part", 0, "run only this part (1, 2 or 3); 0 runs all three")
	trace := flag.Bool("trace", false, "narrate every layer (store, watch cache, HTTP, StreamWatcher, RetryWatcher)")
	s.target.Register(flag.CommandLine)
	flag.Parse()
	if s.timeout <= 0 || s.changes < 2 || s.interval <= 0 || s.only < 0 || s.only > 3 || s.restart <= 0 {
		demo.Fail(fmt.Errorf("need -timeout > 0, -changes >= 2, -interval > 0, -restart-delay > 0, -part 0..3"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, s, demo.Tracer(*trace)); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, s settings, tr *narrate.Tracer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t, err := target.Open(ctx, s.target, apiserver.Config{EnableFaults: true, Tracer: tr}, client.Config{Tracer: tr})
	if err != nil {
		return err
	}
	defer t.Close()
	cms := t.Resource(demo.ConfigMaps)
	if t.Shared() {
		// The server is everyone's: its watch timeout stays as it is.
		p.Say("server", "the shared apiserver on %s, namespace %s: watches end at the server's own timeout", t.URL, t.Namespace)
	} else {
		if err := t.Faults().SetWatchTimeout(ctx, s.timeout); err != nil {
			return err
		}
		p.Say("server", "our apiserver on %s ends every watch after %v (kube-apiserver: 30-60 minutes)", t.URL, s.timeout)
	}
	obj := demo.ConfigMap("demo", map[string]string{"n": "0"}, nil)
	obj.Metadata.Namespace = t.Namespace
	if _, err := demo.CreateFresh(ctx, cms, obj); err != nil {
		return err
	}
	if t.Shared() {
		defer demo.CleanUp(ctx, cms, "demo")
	}
	st := &storm{p: p, faults: t.Faults(), cms: cms, s: s}

	if s.only == 0 || s.only == 1 {
		p.Section("1. a hand-written re-watch loop: watch again from the last resourceVersion")
		r, err := st.run(ctx, func(ctx context.Context, rv string, factory client.WatcherFactory) (<-chan api.Event, func(), error) {
			return rewatchLoop(ctx, p, rv, factory, s.restart), func() {}, nil
		}, st.counted(cms))
		if err != nil {
			return err
		}
		demo.Check(r == result{}, "the re-watch loop got it wrong: %+v", r)
	}

	if s.only == 0 || s.only == 2 {
		p.Section("2. client.RetryWatcher: the same loop, packaged (client-go tools/watch)")
		r, err := st.run(ctx, newRetryWatcher(tr, s.restart), st.counted(cms))
		if err != nil {
			return err
		}
		demo.Check(r == result{}, "RetryWatcher got it wrong: %+v", r)
	}

	if s.only == 0 || s.only == 3 {
		p.Section("3. the second article's subtle bug: a WatchFunc that ignores its options")
		p.Say("code", "WatchFunc: func(ctx, options) { return cms.Watch(ctx, ListOptions{FieldSelector: \"metadata.name=demo\"}) }")
		p.Say("code", "options.ResourceVersion is dropped, so every re-watch starts from \"now\": the server first sends")
		p.Say("code", "the current state as a synthetic ADDED, and what changed while we were away is never sent")
		counted := st.counted(cms)
		ignoresOptions := client.WatchFunc(func(ctx context.Context, _ api.ListOptions) (client.Watcher, error) {
			return counted.Watch(ctx, api.ListOptions{FieldSelector: "metadata.name=demo"})
		})
		r, err := st.run(ctx, newRetryWatcher(tr, s.restart), ignoresOptions)
		if err != nil {
			return err
		}
		// Every watch it opens starts with an ADDED of what we already have.
		demo.Check(r.readded > 0, "the WatchFunc that ignores its options caused no replay")
	}
	return nil
}

// rewatchLoop is the fix, by hand: watch from rv; when the channel closes,
// watch again from the resourceVersion of the last event seen. Its events
// go to the returned channel, which closes when ctx is done.
func rewatchLoop(ctx context.Context, p *demo.Printer, rv string, factory client.WatcherFactory, restartDelay time.Duration) <-chan api.Event {
	out := make(chan api.Event)
	go func() {
		defer close(out)
		for ctx.Err() == nil {
			started := time.Now()
			w, err := factory.Watch(ctx, api.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				p.Say("rewatch", "watch failed: %v; trying again", err)
			} else {
				n := 0
				for ev := range w.ResultChan() { // ends when the channel closes
					switch ev.Type {
					case api.Error:
						// 410 Expired: the history we need is gone; only a
						// new list helps (05-retrywatcher-410).
						p.Say("rewatch", "ERROR %d %s: giving up", ev.Status.Code, ev.Status.Message)
						w.Stop()
						return
					case api.Bookmark:
						// No change, but a newer resourceVersion to resume from.
						rv = ev.Object.Metadata.ResourceVersion
						continue
					}
					select {
					case out <- ev:
					case <-ctx.Done():
						w.Stop()
						return
					}
					rv = ev.Object.Metadata.ResourceVersion
					n++
				}
				if ctx.Err() != nil {
					return
				}
				p.Say("rewatch", "channel closed after %v and %d events: watch again from rv=%s",
					time.Since(started).Round(10*time.Millisecond), n, rv)
			}
			// At most one watch per restartDelay (a second): a server that
			// ends every watch at once must not be hammered (the article
			// sleeps 5 s).
			select {
			case <-time.After(time.Until(started.Add(restartDelay))):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// newRetryWatcher starts a client.RetryWatcher. Its narration (the
// re-watches) is printed even without -trace.
func newRetryWatcher(tr *narrate.Tracer, restartDelay time.Duration) func(ctx context.Context, rv string, factory client.WatcherFactory) (<-chan api.Event, func(), error) {
	return func(ctx context.Context, rv string, factory client.WatcherFactory) (<-chan api.Event, func(), error) {
		rtr := tr
		if rtr == nil {
			rtr = narrate.New(os.Stdout, narrate.WithoutTimes(), narrate.WithFilter(func(layer, _ string) bool {
				return layer == narrate.RetryWatcher
			}))
		}
		rw, err := client.NewRetryWatcher(ctx, rv, factory, client.RetryWatcherOptions{Tracer: rtr, MinRestartDelay: restartDelay})
		if err != nil {
			return nil, nil, err
		}
		return rw.ResultChan(), func() { rw.Stop(); <-rw.Done() }, nil
	}
}

// storm runs one consumer through the changes, the timeouts and the kill,
// and checks what it received against what was written.
type storm struct {
	p      *demo.Printer
	faults target.Faults
	cms    *client.ResourceClient
	s      settings
}

// counted is cms's Watch, printing each request it makes.
func (st *storm) counted(cms *client.ResourceClient) client.WatcherFactory {
	n := 0
	return client.WatchFunc(func(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
		n++
		rv := opts.ResourceVersion
		if rv == "" {
			rv = `"" (from now: current state first)`
		}
		st.p.Say("watch", "#%d GET .../configmaps?watch=true&resourceVersion=%s", n, rv)
		return cms.Watch(ctx, opts)
	})
}

// result is what a consumer got.
type result struct{ lost, dups, readded int }

// start starts a consumer from rv; it returns the events and a stop func.
type start func(ctx context.Context, rv string, factory client.WatcherFactory) (<-chan api.Event, func(), error)

func (st *storm) run(ctx context.Context, begin start, factory client.WatcherFactory) (result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cur, err := st.cms.Get(ctx, "demo")
	if err != nil {
		return result{}, err
	}
	events, stop, err := begin(ctx, cur.Metadata.ResourceVersion, factory)
	if err != nil {
		return result{}, err
	}
	defer stop()

	// The writer: one change every interval, and a kill halfway.
	var mu sync.Mutex
	var written []string // resourceVersions, in order
	writerDone := make(chan error, 1)
	go func() {
		base, _ := strconv.Atoi(demo.Data(cur, "n"))
		for i := 1; i <= st.s.changes; i++ {
			time.Sleep(st.s.interval)
			next := demo.ConfigMap("demo", map[string]string{"n": strconv.Itoa(base + i)}, nil)
			next.Metadata.Namespace = cur.Metadata.Namespace
			obj, err := st.cms.Update(ctx, next)
			if err != nil {
				writerDone <- err
				return
			}
			mu.Lock()
			written = append(written, obj.Metadata.ResourceVersion)
			mu.Unlock()
			if st.s.kill && i == st.s.changes/2 {
				// Between two watches there is no connection to kill:
				// wait (briefly) for the next one.
				n, err := st.faults.KillWatchConnections(ctx)
				for deadline := time.Now().Add(3 * st.s.restart); err == nil && n == 0 && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
					n, err = st.faults.KillWatchConnections(ctx)
				}
				if err != nil {
					writerDone <- err
					return
				}
				st.p.Say("fault", "KillWatchConnections: %d watch connection(s) reset, no goodbye (the article's tcpkill)", n)
			}
		}
		writerDone <- nil
	}()

	// The consumer starts out knowing demo as it was at the start.
	seen := map[string]int{cur.Metadata.ResourceVersion: 1}
	var r result
	var last string
	writing := true
	deadline := time.NewTimer(time.Duration(st.s.changes)*st.s.interval + 10*time.Second)
	defer deadline.Stop()
	for {
		mu.Lock()
		done := !writing && len(written) > 0 && seen[written[len(written)-1]] > 0
		mu.Unlock()
		if done {
			break
		}
		select {
		case err := <-writerDone:
			if err != nil {
				return result{}, err
			}
			writing = false
			continue
		case <-deadline.C:
			return result{}, fmt.Errorf("the consumer did not see the last change in time")
		case ev, ok := <-events:
			if !ok {
				return result{}, fmt.Errorf("the consumer stopped")
			}
			if ev.Type == api.Error {
				return result{}, fmt.Errorf("the consumer stopped with ERROR %d %s", ev.Status.Code, ev.Status.Message)
			}
			rv := ev.Object.Metadata.ResourceVersion
			seen[rv]++
			var notes []string
			if seen[rv] > 1 {
				r.dups++
				notes = append(notes, "DUPLICATE: rv="+rv+" was already handled")
			}
			if ev.Type == api.Added {
				r.readded++
				notes = append(notes, "ADDED again, though demo was never deleted")
			}
			if last != "" && less(rv, last) && seen[rv] == 1 {
				notes = append(notes, "OUT OF ORDER")
			}
			last = rv
			note := ""
			if len(notes) > 0 {
				note = "  <- " + strings.Join(notes, "; ")
			}
			st.p.Say("event", "%-8s demo rv=%-4s n=%s%s", ev.Type, rv, demo.Data(ev.Object, "n"), note)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	var lost []string
	for _, rv := range written {
		if seen[rv] == 0 {
			lost = append(lost, rv)
		}
	}
	received := -1 // the starting state was not an event
	for _, n := range seen {
		received += n
	}
	r.lost = len(lost)
	if len(lost) > 0 {
		st.p.Say("lost", "rv %s: changed while no watch was open; the next ADDED only had the final state", strings.Join(lost, ", "))
	}
	st.p.Say("result", "%d changes made, %d events received: %d lost, %d duplicated, %d ADDED for an object that already existed",
		len(written), received, r.lost, r.dups, r.readded)
	return r, nil
}

// less compares two resourceVersions. Clients must treat them as opaque;
// this example knows our server's are increasing integers.
func less(a, b string) bool {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	return x < y
}
