// Command 03-continue-spins shows the first article's wrong fix: replacing
// the `return` on a closed channel with `continue`. A receive from a closed
// channel never blocks, so the loop turns into a busy loop that burns a CPU
// core and logs "Watcher channel closed" as fast as it can ("日志疯狂报错"),
// while it still receives nothing: the watch is over, and continuing to
// read its channel cannot bring it back.
//
//	go run ./examples/03-continue-spins
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/narrate"
)

func main() {
	timeout := flag.Duration("timeout", time.Second, "the watch's timeoutSeconds: when the server ends it (whole seconds)")
	spin := flag.Duration("spin", 3*time.Second, "how long to let the loop spin before stopping it")
	report := flag.Duration("report", 500*time.Millisecond, "how often to print the spin rate")
	trace := flag.Bool("trace", false, "narrate every layer (store, watch cache, HTTP, StreamWatcher)")
	flag.Parse()
	if *timeout < time.Second || *spin <= 0 || *report <= 0 {
		demo.Fail(fmt.Errorf("-timeout must be at least 1s, -spin and -report positive"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, *timeout, *spin, *report, demo.Tracer(*trace)); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, timeout, spin, report time.Duration, tr *narrate.Tracer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, cms, stop, err := demo.Start(ctx, apiserver.Config{Tracer: tr}, client.Config{Tracer: tr})
	if err != nil {
		return err
	}
	defer stop()
	p.Say("server", "our apiserver on %s; the watch asks for timeoutSeconds=%d so it ends soon", srv.URL(), int(timeout/time.Second))

	created, err := cms.Create(ctx, demo.ConfigMap("demo", map[string]string{"n": "0"}, nil))
	if err != nil {
		return err
	}
	secs := int64(timeout / time.Second)
	w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: created.Metadata.ResourceVersion, TimeoutSeconds: &secs})
	if err != nil {
		return err
	}
	defer w.Stop()

	// The spinning loop runs in its own goroutine; these counters are how
	// we watch it from outside. stopSpinning is ours, not the article's:
	// its loop never ends.
	var iterations, logLines, events atomic.Int64
	var stopSpinning atomic.Bool
	closedAt := make(chan time.Duration, 1)
	loopDone := make(chan struct{})
	start := time.Now()

	go func() {
		defer close(loopDone)
		ch := w.ResultChan()
		// The article's second version: `continue` instead of `return`.
		//lint:ignore S1000 the article's loop, kept as the article wrote it
		for {
			select {
			case event, ok := <-ch:
				iterations.Add(1)
				if !ok {
					if logLines.Add(1) == 1 {
						closedAt <- time.Since(start)
					}
					switch n := logLines.Load(); {
					case n <= 3:
						p.Say("log", "ERROR [trace-] Watcher channel closed")
					case n == 4:
						p.Say("log", "... (and so on: the rest are counted, not printed)")
					}
					if stopSpinning.Load() {
						return
					}
					continue
				}
				events.Add(1)
				p.Say("event", "%-8s %s rv=%s", event.Type, event.Object.Metadata.Name, event.Object.Metadata.ResourceVersion)
			}
		}
	}()

	// Changes keep coming, before and after the watch ends.
	writerDone := make(chan error, 1)
	go func() {
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-loopDone:
				writerDone <- nil
				return
			case <-tick.C:
			}
			if _, err := cms.Update(ctx, demo.ConfigMap("demo", map[string]string{"n": strconv.Itoa(n)}, nil)); err != nil {
				writerDone <- err
				return
			}
		}
	}()

	var closed time.Duration
	select {
	case closed = <-closedAt:
	case <-time.After(timeout + 10*time.Second):
		return fmt.Errorf("the watch did not end within %v", timeout+10*time.Second)
	}
	p.Say("closed", "+%v the server ended the watch; the loop now `continue`s on a closed channel", closed.Round(10*time.Millisecond))

	tick := time.NewTicker(report)
	defer tick.Stop()
	spinStart := time.Now()
	lastN := iterations.Load()
	lastT := spinStart
	eventsAtClose := events.Load()
	for time.Since(spinStart) < spin {
		now := <-tick.C
		n := iterations.Load()
		rate := float64(n-lastN) / now.Sub(lastT).Seconds()
		lastN, lastT = n, now
		p.Say("spin", "+%-5v %12s iterations/s, %s log lines so far, %d new events",
			now.Sub(start).Round(100*time.Millisecond), thousands(int64(rate)), thousands(logLines.Load()), events.Load()-eventsAtClose)
	}
	stopSpinning.Store(true)
	<-loopDone
	if err := <-writerDone; err != nil {
		return err
	}

	spun := time.Since(spinStart)
	total := logLines.Load()
	p.Say("result", "in %v the loop went round %s times and would have logged %s lines of \"Watcher channel closed\"",
		spun.Round(100*time.Millisecond), thousands(total), thousands(total))
	p.Say("result", "it received %d events after the close: the ConfigMap kept changing, but the watch is over", events.Load()-eventsAtClose)
	p.Say("result", "a loop that never blocks keeps a CPU core busy (this machine has %d); the fix is to watch again (04-rewatch)", runtime.NumCPU())

	demo.Check(total > 1000, "the loop went round only %d times: it should spin", total)
	demo.Check(events.Load() == eventsAtClose, "events arrived on a closed channel")
	return nil
}

// thousands formats n as 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
