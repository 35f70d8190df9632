// Command 02-channel-closes reproduces the first article's bug: a watch's
// ResultChan closes by itself after a while, the loop reading it stops, and
// every change from then on is missed.
//
// Nothing is wrong with the server or the network. kube-apiserver ends
// every watch that did not ask for a timeout after --min-request-timeout
// (1800 s) × (1 + a random fraction), i.e. 30 to 60 minutes: a watch is a
// lease, not a subscription. Here the server's minimum is 3 seconds, so the
// half hour takes 3 to 6.
//
//	go run ./examples/02-channel-closes
//
// Against a shared apiserver (the workshop's), in a namespace of your own,
// the watch ends at that server's own timeout (10 to 20 seconds with the
// workshop's --min-request-timeout 10s), and the server's narration of the
// end is in its own terminal:
//
//	go run ./examples/02-channel-closes -server http://127.0.0.1:8080 -namespace alice
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/internal/target"
	"listwatch/narrate"
)

func main() {
	timeout := flag.Duration("timeout", 3*time.Second,
		"the server's minimum watch timeout (kube-apiserver --min-request-timeout, 1800s in production); a watch lasts 1-2× this")
	interval := flag.Duration("interval", 500*time.Millisecond, "how often the ConfigMap changes")
	after := flag.Duration("after", 2*time.Second, "how long to keep changing it after the channel closed")
	trace := flag.Bool("trace", false, "narrate every layer (store, watch cache, HTTP, StreamWatcher; on a shared server, the client's)")
	var tf target.Flags
	tf.Register(flag.CommandLine)
	flag.Parse()
	if *timeout <= 0 || *interval <= 0 || *after < 0 {
		demo.Fail(fmt.Errorf("-timeout and -interval must be positive, -after not negative"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, tf, *timeout, *interval, *after, demo.Tracer(*trace)); err != nil {
		demo.Fail(err)
	}
}

// change is one write we made: its resourceVersion and when.
type change struct {
	rv string
	at time.Duration
}

func run(p *demo.Printer, tf target.Flags, timeout, interval, after time.Duration, tr *narrate.Tracer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t, err := target.Open(ctx, tf, apiserver.Config{MinRequestTimeout: timeout, Tracer: tr}, client.Config{Tracer: tr})
	if err != nil {
		return err
	}
	defer t.Close()
	cms := t.Resource(demo.ConfigMaps)
	if t.Shared() {
		p.Say("server", "the shared apiserver on %s, namespace %s, ends a watch without timeoutSeconds at its own timeout",
			t.URL, t.Namespace)
		p.Say("server", "(the workshop's --min-request-timeout 10s: between 10 and 20 seconds; kube-apiserver: 30 to 60 minutes)")
	} else {
		p.Say("server", "our apiserver on %s ends a watch without timeoutSeconds after %v×(1+rand): between %v and %v",
			t.URL, timeout, timeout, 2*timeout)
		p.Say("server", "(kube-apiserver: --min-request-timeout=1800s, so between 30 and 60 minutes)")
	}
	configMap := func(n int) *api.Object {
		obj := demo.ConfigMap("demo", map[string]string{"n": strconv.Itoa(n)}, nil)
		obj.Metadata.Namespace = t.Namespace
		return obj
	}
	created, err := demo.CreateFresh(ctx, cms, configMap(0))
	if err != nil {
		return err
	}
	if t.Shared() {
		defer demo.CleanUp(ctx, cms, "demo")
	}

	// The article's code: Watch once, with no timeout, and read the channel.
	w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: created.Metadata.ResourceVersion})
	if err != nil {
		return err
	}
	defer w.Stop()
	start := time.Now()
	p.Say("watch", "watching ConfigMaps from resourceVersion %s, no timeoutSeconds (like the article)", created.Metadata.ResourceVersion)

	// Meanwhile someone keeps changing the ConfigMap.
	var mu sync.Mutex
	var made []change
	writerDone := make(chan error, 1)
	stopWriting := make(chan struct{})
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-stopWriting:
				writerDone <- nil
				return
			case <-tick.C:
			}
			obj, err := cms.Update(ctx, configMap(n))
			if err != nil {
				writerDone <- err
				return
			}
			mu.Lock()
			made = append(made, change{rv: obj.Metadata.ResourceVersion, at: time.Since(start)})
			mu.Unlock()
		}
	}()

	// The article's loop, as it was first written.
	received := map[string]bool{}
	ch := w.ResultChan()
loop:
	//lint:ignore S1000 the article's loop, kept as the article wrote it
	for {
		select {
		case event, ok := <-ch:
			if !ok {
				p.Say("log", `ERROR [trace-] Watcher channel closed    <- the article's log line, at +%v`, since(start))
				break loop
			}
			p.Say("event", "+%-6v %-8s %s rv=%s n=%s", since(start), event.Type,
				event.Object.Metadata.Name, event.Object.Metadata.ResourceVersion, demo.Data(event.Object, "n"))
			received[event.Object.Metadata.ResourceVersion] = true
		}
	}
	closedAt := time.Since(start)
	p.Say("closed", "the server ended the watch after %v: no error, no event, the channel just closed", closedAt.Round(100*time.Millisecond))

	// A closed channel answers every receive at once, with the zero value.
	event, ok := <-ch
	p.Say("closed", "one more receive: ok=%v, event type %q, and it did not wait: a closed channel never blocks (see 03)", ok, event.Type)

	// The ConfigMap keeps changing; nobody is listening.
	time.Sleep(after)
	close(stopWriting)
	if err := <-writerDone; err != nil {
		return err
	}

	mu.Lock()
	defer mu.Unlock()
	var missed []change
	for _, c := range made {
		if !received[c.rv] {
			missed = append(missed, c)
		}
	}
	for _, c := range missed {
		p.Say("missed", "+%-6v MODIFIED demo rv=%s  never delivered: the watch had ended", c.at.Round(10*time.Millisecond), c.rv)
	}
	p.Say("result", "%d changes made, %d received, %d missed after the channel closed", len(made), len(received), len(missed))
	p.Say("result", "fix: when ok is false, watch again from the last resourceVersion seen (04-rewatch)")

	if !t.Shared() {
		demo.Check(closedAt >= timeout, "the watch closed after %v, before the server's minimum %v", closedAt, timeout)
	}
	demo.Check(len(missed) > 0, "no change was missed: make -after longer than -interval")
	for _, c := range missed {
		// Only changes from about the end of the watch on can be missed (a
		// second of slack for a busy machine).
		demo.Check(c.at >= closedAt-interval-time.Second, "change rv=%s at %v was missed although the watch was open until %v", c.rv, c.at, closedAt)
	}
	return nil
}

func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }
