// Command 11-watch-list shows watch-list, the way client-go's informers
// start since Kubernetes 1.35 (the WatchListClient feature, KEP-3157):
// instead of a LIST and then a WATCH, one WATCH with sendInitialEvents=true.
// The server first sends the current state as ADDED events, then a
// BOOKMARK annotated k8s.io/initial-events-end: "true" that says "that was
// everything, as of this resourceVersion", and then the watch goes on live.
//
// Part 2 shows why client-go made it the default: a LIST answer is one
// document that the server builds, and the client reads, whole; watch-list
// sends the same objects one event at a time.
//
//	go run ./examples/11-watch-list
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
)

func main() {
	objects := flag.Int("objects", 500, "how many ConfigMaps part 2 lists and watch-lists")
	size := flag.Int("size", 1024, "bytes of data in each of those ConfigMaps")
	trace := flag.Bool("trace", false, "narrate every layer")
	flag.Parse()
	if *objects < 1 || *size < 0 {
		demo.Fail(errors.New("-objects must be positive and -size not negative"))
	}
	if err := run(demo.NewPrinter(os.Stdout), *objects, *size, *trace); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, objects, size int, trace bool) error {
	// Ctrl-C ends it; there is no time limit, since a busy laptop may need
	// a while for part 2's thousands of writes.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	tr := demo.Tracer(trace)
	srv, cms, stop, err := demo.Start(ctx, apiserver.Config{Tracer: tr}, client.Config{Tracer: tr})
	if err != nil {
		return err
	}
	defer stop()
	p.Say("server", "our apiserver on %s", srv.URL())
	for _, name := range []string{"a", "b", "c"} {
		if _, err := cms.Create(ctx, demo.ConfigMap(name, map[string]string{"v": "1"}, nil)); err != nil {
			return err
		}
	}
	p.Say("setup", "created ConfigMaps a, b and c")

	p.Section("1. one watch instead of LIST + WATCH: the state as ADDED events, a bookmark, then live")
	path := "/api/v1/namespaces/" + demo.Namespace + "/configmaps"
	query := "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=10"
	p.Say("request", "GET %s%s", path, query)
	body, err := get(ctx, srv.URL()+path+query)
	if err != nil {
		return err
	}
	defer body.Close()
	events := bufio.NewReader(body)

	// The initial events, up to the bookmark that ends them.
	var initial int
	var endRV string
	for endRV == "" {
		ev, _, err := next(events)
		if err != nil {
			return err
		}
		switch ev.Type {
		case api.Added:
			initial++
			p.Say("event", "ADDED    %s rv=%s  (initial: the state as it is, not a change)", ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion)
		case api.Bookmark:
			if ev.Object.Metadata.Annotations[api.InitialEventsEndAnnotation] != "true" {
				p.Say("event", "BOOKMARK rv=%s  (a progress note, not the end of the initial events)", ev.Object.Metadata.ResourceVersion)
				continue
			}
			endRV = ev.Object.Metadata.ResourceVersion
			p.Say("event", "BOOKMARK rv=%s  annotations: %s=%q", endRV, api.InitialEventsEndAnnotation, "true")
			p.Say("meaning", "that was the whole state as of rv %s: an informer is now synced, as after a LIST", endRV)
		default:
			return fmt.Errorf("unexpected %s event before the initial events ended", ev.Type)
		}
	}
	demo.Check(initial == 3, "expected 3 initial ADDED events, got %d", initial)

	// Then it is an ordinary watch. Each change is printed before it is
	// made, so that it comes before the event it causes.
	changes := []struct {
		say   string
		write func() error
	}{
		{"create d", func() error {
			_, err := cms.Create(ctx, demo.ConfigMap("d", map[string]string{"v": "1"}, nil))
			return err
		}},
		{"update a: v=2", func() error {
			_, err := cms.Update(ctx, demo.ConfigMap("a", map[string]string{"v": "2"}, nil))
			return err
		}},
	}
	for _, c := range changes {
		p.Say("change", "%s", c.say)
		if err := c.write(); err != nil {
			return err
		}
		ev, _, err := next(events)
		for err == nil && ev.Type == api.Bookmark {
			ev, _, err = next(events)
		}
		if err != nil {
			return err
		}
		p.Say("event", "%-8s %s rv=%s  (live)", ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion)
	}
	_ = body.Close()

	p.Section("2. why client-go turned it on: a LIST is built whole, watch-list streams")
	payload := strings.Repeat("x", size)
	for i := 0; i < objects; i++ {
		if _, err := cms.Create(ctx, demo.ConfigMap(fmt.Sprintf("big-%04d", i), map[string]string{"payload": payload}, nil)); err != nil {
			return err
		}
	}
	p.Say("setup", "created %d more ConfigMaps with %d bytes of data each", objects, size)

	list, err := get(ctx, srv.URL()+path)
	if err != nil {
		return err
	}
	listBytes, err := io.Copy(io.Discard, list)
	_ = list.Close()
	if err != nil {
		return err
	}
	p.Say("list", "GET %s → one JSON document of %s: built whole by the server, parsed whole by the client", path, kib(listBytes))

	wl, err := get(ctx, srv.URL()+path+query)
	if err != nil {
		return err
	}
	defer wl.Close()
	r := bufio.NewReader(wl)
	var n, largest, total int
	for {
		ev, raw, err := next(r)
		if err != nil {
			return err
		}
		total += raw
		if ev.Type == api.Added {
			n++
			largest = max(largest, raw)
		}
		if ev.Type == api.Bookmark && ev.Object.Metadata.Annotations[api.InitialEventsEndAnnotation] == "true" {
			break
		}
	}
	_ = wl.Close()
	p.Say("watchlist", "the same state as %d events, %s in all; the largest is %s: one object at a time", n, kib(int64(total)), kib(int64(largest)))
	p.Say("why", "a LIST of a large collection must be held in memory at once, on the server and in the client;")
	p.Say("why", "after an apiserver restart every informer re-lists together, and those LISTs ran servers out of memory.")
	p.Say("why", "client-go's WatchListClient (on by default since 1.35) sends one watch-list instead.")
	demo.Check(n == objects+4, "expected %d initial events, got %d", objects+4, n)
	demo.Check(int64(largest)*10 < listBytes, "the largest event (%d bytes) is not much smaller than the list (%d bytes)", largest, listBytes)
	return nil
}

// get starts a GET and returns its body once the server has answered 200.
func get(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return resp.Body, nil
}

// next reads one watch event: one line of JSON. It returns the event and
// its size on the wire.
func next(r *bufio.Reader) (api.Event, int, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return api.Event{}, 0, fmt.Errorf("reading the watch: %w", err)
	}
	var ev api.Event
	if err := ev.UnmarshalJSON(line); err != nil {
		return api.Event{}, 0, err
	}
	if ev.Type == api.Error {
		return api.Event{}, 0, fmt.Errorf("the watch ended with ERROR %d %s", ev.Status.Code, ev.Status.Message)
	}
	return ev, len(line), nil
}

// kib writes a byte count the way a person reads it.
func kib(n int64) string {
	if n < 10*1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KiB", n/1024)
}
