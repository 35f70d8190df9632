// Command 09-fanout opens many watches on one apiserver and shows that the
// store underneath still has exactly one watch per resource.
//
// It answers the third article's history lesson: early Kubernetes
// components all watched etcd directly, and etcd buckled under thousands
// of watchers; now only kube-apiserver watches etcd, once per resource,
// and fans each event out from its watch cache to every client, encoding
// it once for all of them. Here the store plays etcd, and the debug view
// (GET /debug/listwatch) shows both sides.
//
//	go run ./examples/09-fanout
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/narrate"
)

func main() {
	watchers := flag.Int("watchers", 200, "how many client watches to open")
	changes := flag.Int("changes", 5, "how many changes to fan out")
	trace := flag.Bool("trace", false, "narrate every layer (very long with many watchers)")
	flag.Parse()
	if *watchers < 1 || *changes < 1 {
		demo.Fail(fmt.Errorf("-watchers and -changes must be positive"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, *watchers, *changes, *trace); err != nil {
		demo.Fail(err)
	}
}

// storeWatches counts the store's open watches from its narration: the
// store says "watch <prefix> from rev N" when one opens and "watch <prefix>
// ended" when one ends.
type storeWatches struct {
	mu     sync.Mutex
	prefix map[string]int // open store watches by key prefix
}

// count returns the open store watches, in total and under prefix.
func (s *storeWatches) count(prefix string) (total, under int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, n := range s.prefix {
		total += n
		if strings.Contains(p, prefix) {
			under += n
		}
	}
	return total, under
}

func (s *storeWatches) tracer(trace bool) *narrate.Tracer {
	var w io.Writer = io.Discard
	if trace {
		w = os.Stdout
	}
	return narrate.New(w, narrate.WithColour(trace && demo.IsTerminal(os.Stdout)), narrate.WithFilter(func(layer, line string) bool {
		if layer == narrate.Store && strings.HasPrefix(line, "watch ") {
			prefix, _, _ := strings.Cut(strings.TrimPrefix(line, "watch "), " ")
			s.mu.Lock()
			if s.prefix == nil {
				s.prefix = map[string]int{}
			}
			switch {
			case strings.Contains(line, " from rev "):
				s.prefix[prefix]++
			case strings.Contains(line, " ended"):
				s.prefix[prefix]--
			}
			s.mu.Unlock()
		}
		return trace
	}))
}

func run(p *demo.Printer, watchers, changes int, trace bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sw storeWatches
	srv, cms, stop, err := demo.Start(ctx, apiserver.Config{Tracer: sw.tracer(trace)}, client.Config{})
	if err != nil {
		return err
	}
	defer stop()
	p.Say("server", "our apiserver on %s", srv.URL())
	p.Say("debug", "curl -s %s/debug/listwatch   (the server's own view of its watches)", srv.URL())

	before, err := debugView(ctx, srv.URL())
	if err != nil {
		return err
	}
	storeBefore, cmBefore := sw.count("/configmaps/")
	// The watch caches open one store watch per resource; the server may
	// open a few more for itself (the CustomResourceDefinition controller
	// follows its definitions), so say so rather than let the numbers
	// disagree.
	own := ""
	if n := storeBefore - len(before.Caches); n > 0 {
		own = fmt.Sprintf(", and the server %d more for its own use", n)
	}
	p.Say("store", "%d watches open on the store, %d of them on configmaps: the %d watch caches opened one per resource at start%s",
		storeBefore, cmBefore, len(before.Caches), own)

	p.Section("1. %d clients watch ConfigMaps", watchers)
	list, err := cms.List(ctx, api.ListOptions{})
	if err != nil {
		return err
	}
	// Every client watches from the list's resourceVersion and records
	// when each change reaches it.
	var wg sync.WaitGroup
	var received atomic.Int64
	arrivals := make([]chan string, watchers)
	ws := make([]client.Watcher, 0, watchers)
	defer func() {
		for _, w := range ws {
			w.Stop()
		}
		wg.Wait()
	}()
	opened := time.Now()
	for i := range watchers {
		w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: list.Metadata.ResourceVersion})
		if err != nil {
			return fmt.Errorf("watch %d: %w", i+1, err)
		}
		ws = append(ws, w)
		arrivals[i] = make(chan string, changes)
		wg.Add(1)
		go func(w client.Watcher, arrived chan<- string) {
			defer wg.Done()
			for ev := range w.ResultChan() {
				if ev.Type == api.Added {
					received.Add(1)
					arrived <- ev.Object.Metadata.Name
				}
			}
		}(w, arrivals[i])
	}
	p.Say("clients", "%d watches open (%v to open them all)", watchers, time.Since(opened).Round(time.Millisecond))

	mid, err := debugView(ctx, srv.URL())
	if err != nil {
		return err
	}
	cm := mid.cache("configmaps")
	p.Say("debug", "watchesOpen=%d; the configmaps watch cache has %d watchers", mid.WatchesOpen, len(cm.Watchers))
	total, onCM := sw.count("/configmaps/")
	p.Say("store", "%d watches open on the store, %d of them on configmaps: still one per resource", total, onCM)

	p.Section("2. %d changes, fanned out to every client", changes)
	for c := 1; c <= changes; c++ {
		name := "fanout-" + strconv.Itoa(c)
		start := time.Now()
		if _, err := cms.Create(ctx, demo.ConfigMap(name, map[string]string{"n": strconv.Itoa(c)}, nil)); err != nil {
			return err
		}
		for i, ch := range arrivals {
			select {
			case got := <-ch:
				if got != name {
					return fmt.Errorf("watcher %d got %s, expected %s", i+1, got, name)
				}
			case <-time.After(15 * time.Second):
				return fmt.Errorf("watcher %d did not get %s within 15s", i+1, name)
			}
		}
		p.Say("change", "create %s → delivered to all %d watchers in %v", name, watchers, time.Since(start).Round(100*time.Microsecond))
	}

	after, err := debugView(ctx, srv.URL())
	if err != nil {
		return err
	}
	cmAfter := after.cache("configmaps")
	frames := cmAfter.FramesEncoded - cm.FramesEncoded
	p.Say("debug", "configmaps watch cache: %d events dispatched, %d frames encoded (%d bytes): each change encoded once, for everyone",
		cmAfter.EventsDispatched-cm.EventsDispatched, frames, cmAfter.BytesEncoded-cm.BytesEncoded)
	total, onCM = sw.count("/configmaps/")
	p.Say("store", "%d watches open on the store, %d of them on configmaps", total, onCM)
	p.Say("result", "%d client watches, %d events delivered, and the store (our etcd) had %d watch on ConfigMaps the whole time",
		watchers, received.Load(), onCM)
	p.Say("result", "without the watch cache, every client would hold its own store watch: %d instead of 1", watchers)

	demo.Check(len(cm.Watchers) == watchers, "the debug view shows %d configmaps watchers, not %d", len(cm.Watchers), watchers)
	demo.Check(total == storeBefore && onCM == 1 && cmBefore == 1, "the store has %d watches (%d on configmaps), it had %d (%d) before the clients came",
		total, onCM, storeBefore, cmBefore)
	demo.Check(received.Load() == int64(watchers*changes), "delivered %d events, expected %d", received.Load(), watchers*changes)
	demo.Check(frames <= int64(changes), "encoded %d frames for %d changes: encoding is not shared", frames, changes)
	return nil
}

// view is the part of GET /debug/listwatch this example reads.
type view struct {
	WatchesOpen int64       `json:"watchesOpen"`
	Caches      []cacheView `json:"watchCaches"`
}

// cacheView is one watch cache in the debug view.
type cacheView struct {
	Resource         string `json:"resource"`
	EventsDispatched int64  `json:"eventsDispatched"`
	FramesEncoded    int64  `json:"framesEncoded"`
	BytesEncoded     int64  `json:"bytesEncoded"`
	Watchers         []struct {
		ID int64 `json:"id"`
	} `json:"watchers"`
}

func (v *view) cache(resource string) cacheView {
	for _, c := range v.Caches {
		if c.Resource == resource {
			return c
		}
	}
	return cacheView{}
}

func debugView(ctx context.Context, base string) (*view, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/debug/listwatch", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /debug/listwatch: %s", resp.Status)
	}
	var v view
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return nil, fmt.Errorf("GET /debug/listwatch: %w", err)
	}
	return &v, nil
}
