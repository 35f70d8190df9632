package informer_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"listwatch/api"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/narrate"
)

// server is a stand-in for the apiserver: it lists a fixed set of
// ConfigMaps and streams the events pushed on its channel. A watch-list
// (sendInitialEvents, the Reflector's default) first gets the fixed set as
// ADDED events and the BOOKMARK that ends them.
type server struct {
	items  []*api.Object
	events chan api.Event
}

func (s *server) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	return &api.List{Metadata: api.ListMeta{ResourceVersion: "10"}, Items: s.items}, nil
}

func (s *server) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	w := &watch{out: make(chan api.Event), stop: make(chan struct{})}
	var initial []api.Event
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		for _, o := range s.items {
			initial = append(initial, api.Event{Type: api.Added, Object: o})
		}
		initial = append(initial, api.Event{Type: api.Bookmark, Object: &api.Object{Metadata: api.ObjectMeta{
			ResourceVersion: "10", Annotations: map[string]string{api.InitialEventsEndAnnotation: "true"}}}})
	}
	go func() {
		defer close(w.out)
		for _, ev := range initial {
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		}
		for {
			select {
			case ev := <-s.events:
				select {
				case w.out <- ev:
				case <-w.stop:
					return
				}
			case <-w.stop:
				return
			}
		}
	}()
	return w, nil
}

type watch struct {
	out  chan api.Event
	stop chan struct{}
}

func (w *watch) ResultChan() <-chan api.Event { return w.out }
func (w *watch) Stop()                        { close(w.stop) }

func configMap(ns, name, rv string) *api.Object {
	return &api.Object{Kind: "ConfigMap", APIVersion: "v1",
		Metadata: api.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

// An informer lists, caches and tells its handlers; the cache answers
// queries by index.
func Example() {
	srv := &server{
		items:  []*api.Object{configMap("default", "a", "4"), configMap("kube-system", "b", "9")},
		events: make(chan api.Event),
	}
	inf, err := informer.NewSharedIndexInformer(srv, informer.Options{})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	_, _ = inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc: func(o *api.Object, initial bool) {
			fmt.Printf("add %s (initial list: %t)\n", o.Key(), initial)
		},
		UpdateFunc: func(old, o *api.Object) {
			fmt.Printf("update %s rv %s→%s\n", o.Key(), old.Metadata.ResourceVersion, o.Metadata.ResourceVersion)
			close(done)
		},
	})
	stopped := make(chan struct{})
	go func() { inf.Run(ctx); close(stopped) }()

	informer.WaitForCacheSync(ctx, inf)
	srv.events <- api.Event{Type: api.Modified, Object: configMap("default", "a", "11")}
	<-done
	inDefault, _ := inf.GetIndexer().ByIndex(informer.NamespaceIndex, "default")
	fmt.Println("cached in default:", len(inDefault), "at rv", inDefault[0].Metadata.ResourceVersion)
	cancel()
	<-stopped
	// Output:
	// add default/a (initial list: true)
	// add kube-system/b (initial list: true)
	// update default/a rv 4→11
	// cached in default: 1 at rv 11
}

// One Tracer narrates every layer; here filtered to one object, followed
// from the watch event to the handler.
func Example_narrated() {
	srv := &server{events: make(chan api.Event)}
	tr := narrate.New(os.Stdout, narrate.WithoutTimes(), narrate.WithFilter(func(layer, line string) bool {
		return strings.Contains(line, "default/demo")
	}))
	inf, _ := informer.NewSharedIndexInformer(srv, informer.Options{Tracer: tr})
	got := make(chan struct{})
	_, _ = inf.AddEventHandlerWithOptions(informer.ResourceEventHandlerFuncs{
		AddFunc: func(o *api.Object, _ bool) { close(got) },
	}, informer.HandlerOptions{Name: "printer"})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { inf.Run(ctx); close(stopped) }()

	informer.WaitForCacheSync(ctx, inf)
	srv.events <- api.Event{Type: api.Added, Object: configMap("default", "demo", "11")}
	<-got
	cancel()
	<-stopped
	// Output:
	// reflector     event ADDED default/demo rv=11
	// queue         queued Added default/demo (1 delta in line)
	// queue         popped Added default/demo (0 deltas left)
	// indexer       indexed default/demo rv=11 (1 cached)
	// processor     dispatched ADD default/demo rv=11 to handler printer (backlog 1)
	// handler       printer ADD default/demo rv=11
}
