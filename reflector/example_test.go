package reflector_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/narrate"
	"listwatch/reflector"
)

// scriptedLW lists two ConfigMaps, then serves one scripted watch stream per
// Watch call, each ending as a server's timeout would end it.
type scriptedLW struct {
	streams [][]api.Event
	stop    context.CancelFunc
}

func (s *scriptedLW) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	return &api.List{Metadata: api.ListMeta{ResourceVersion: "10"},
		Items: []*api.Object{cm("a", "4"), cm("b", "9")}}, nil
}

func (s *scriptedLW) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	if len(s.streams) == 0 {
		s.stop() // enough for the example
		return nil, ctx.Err()
	}
	evs := s.streams[0]
	s.streams = s.streams[1:]
	ch := make(chan api.Event, len(evs))
	for _, ev := range evs {
		ch <- ev
	}
	close(ch) // the server ends the watch
	return closedWatch(ch), nil
}

type closedWatch chan api.Event

func (c closedWatch) ResultChan() <-chan api.Event { return c }
func (c closedWatch) Stop()                        {}

// printStore prints what the Reflector hands it.
type printStore struct{}

func (printStore) Add(o *api.Object) error    { fmt.Println("store: add", o.Key()); return nil }
func (printStore) Update(o *api.Object) error { fmt.Println("store: update", o.Key()); return nil }
func (printStore) Delete(o *api.Object) error { fmt.Println("store: delete", o.Key()); return nil }
func (printStore) Resync() error              { return nil }
func (printStore) Replace(l []*api.Object, rv string) error {
	fmt.Println("store: replace with", len(l), "objects at rv", rv)
	return nil
}

func cm(name, rv string) *api.Object {
	return &api.Object{Metadata: api.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// A Reflector streams the initial state (watch-list, the default): ADDED
// events, then the BOOKMARK marking their end, whose resourceVersion the
// Store is replaced at; the same stream carries on as the watch. When the
// server ends a watch the Reflector re-opens it from the last
// resourceVersion seen (here advanced by a BOOKMARK) without listing.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	end := &api.Object{Metadata: api.ObjectMeta{ResourceVersion: "10",
		Annotations: map[string]string{api.InitialEventsEndAnnotation: "true"}}}
	lw := &scriptedLW{stop: cancel, streams: [][]api.Event{
		{
			{Type: api.Added, Object: cm("a", "9")},
			{Type: api.Added, Object: cm("b", "10")},
			{Type: api.Bookmark, Object: end},
			{Type: api.Modified, Object: cm("a", "11")},
			{Type: api.Bookmark, Object: &api.Object{Metadata: api.ObjectMeta{ResourceVersion: "15"}}},
		},
		{
			{Type: api.Deleted, Object: cm("b", "16")},
		},
	}}
	r := reflector.New(lw, printStore{}, reflector.Options{
		MinWatchTimeout: time.Minute, MaxWatchTimeout: time.Minute, // a fixed timeoutSeconds
		Tracer: narrate.New(os.Stdout, narrate.WithoutTimes()),
	})
	r.Run(ctx)
	fmt.Println("last synced rv:", r.LastSyncResourceVersion())
	// Output:
	// reflector     starting
	// reflector     watch-list opened from rv "" (sendInitialEvents, timeoutSeconds=60)
	// reflector     event ADDED default/a rv=9
	// reflector     event ADDED default/b rv=10
	// reflector     event BOOKMARK rv=10
	// reflector     streamed 2 items at rv 10 (initial-events-end bookmark)
	// store: replace with 2 objects at rv 10
	// reflector     event MODIFIED default/a rv=11
	// store: update default/a
	// reflector     event BOOKMARK rv=15
	// reflector     watch ended with no error after 2 events; re-watch from rv 15 without re-listing
	// reflector     watch opened from rv 15 (timeoutSeconds=60, bookmarks on)
	// reflector     event DELETED default/b rv=16
	// store: delete default/b
	// reflector     watch ended with no error after 1 event; re-watch from rv 16 without re-listing
	// reflector     stopped
	// last synced rv: 16
}
