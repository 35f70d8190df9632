package informer

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/fifo"
)

// waitTimeout bounds every wait in these tests; none is expected to come
// close to it. It only turns a hang into a failure, so it is generous
// enough for a busy machine under -race.
const waitTimeout = 2 * time.Minute

// fakeServer is a ListerWatcher over an in-memory set of objects: what
// the tests change is listed by List and streamed to the open watches, as
// an apiserver would. It can also misbehave on purpose: close its watches,
// expire them (410), forget to tell a watch about a deletion, fail lists.
type fakeServer struct {
	mu       sync.Mutex
	rv       int
	objs     map[string]*api.Object
	watches  []*fakeWatch
	listErrs []error
	// opened receives the options of every watch opened, lists the
	// options of every list served.
	opened chan api.ListOptions
	lists  chan api.ListOptions
	// listGate, if not nil, holds lists until it is closed.
	listGate chan struct{}
}

func newFakeServer() *fakeServer {
	return &fakeServer{objs: map[string]*api.Object{}, rv: 100,
		opened: make(chan api.ListOptions, 1000), lists: make(chan api.ListOptions, 1000)}
}

func cm(ns, name, rv string) *api.Object {
	return &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

func (s *fakeServer) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	if err := s.initialState(ctx, opts); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &api.List{APIVersion: "v1", Kind: "ConfigMapList", Metadata: api.ListMeta{ResourceVersion: strconv.Itoa(s.rv)}}
	for _, k := range slices.Sorted(maps.Keys(s.objs)) {
		l.Items = append(l.Items, s.objs[k].DeepCopy())
	}
	return l, nil
}

// initialState is what a list and a watch-list share: wait for listGate,
// record the request on lists, and fail with the next of listErrs.
func (s *fakeServer) initialState(ctx context.Context, opts api.ListOptions) error {
	s.mu.Lock()
	gate := s.listGate
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists <- opts
	if len(s.listErrs) > 0 {
		err := s.listErrs[0]
		s.listErrs = s.listErrs[1:]
		return err
	}
	return nil
}

// Watch opens a watch. With sendInitialEvents (a watch-list, the
// Reflector's default) it first streams an ADDED event per object and the
// BOOKMARK that ends them, as the apiserver's watch cache does.
func (s *fakeServer) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	watchList := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if watchList {
		if err := s.initialState(ctx, opts); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := newFakeWatch(s)
	if watchList {
		for _, k := range slices.Sorted(maps.Keys(s.objs)) {
			w.push(api.Event{Type: api.Added, Object: s.objs[k].DeepCopy()})
		}
		end := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{ResourceVersion: strconv.Itoa(s.rv),
			Annotations: map[string]string{api.InitialEventsEndAnnotation: "true"}}}
		w.push(api.Event{Type: api.Bookmark, Object: end})
	}
	s.watches = append(s.watches, w)
	s.opened <- opts
	return w, nil
}

// set creates or updates name with an optional "data" value.
func (s *fakeServer) set(ns, name, data string) *api.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	o := cm(ns, name, strconv.Itoa(s.rv))
	if data != "" {
		_ = o.Set("data", []byte(strconv.Quote(data)))
	}
	typ := api.Added
	if _, ok := s.objs[o.Key()]; ok {
		typ = api.Modified
	}
	s.objs[o.Key()] = o
	s.broadcastLocked(api.Event{Type: typ, Object: o.DeepCopy()})
	return o
}

// remove deletes ns/name; with tell false the open watches miss it.
func (s *fakeServer) remove(ns, name string, tell bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ns + "/" + name
	o, ok := s.objs[key]
	if !ok {
		return
	}
	delete(s.objs, key)
	s.rv++
	gone := o.DeepCopy()
	gone.Metadata.ResourceVersion = strconv.Itoa(s.rv)
	if tell {
		s.broadcastLocked(api.Event{Type: api.Deleted, Object: gone})
	}
}

// bookmark sends every open watch a BOOKMARK at the current revision.
func (s *fakeServer) bookmark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{ResourceVersion: strconv.Itoa(s.rv)}}
	s.broadcastLocked(api.Event{Type: api.Bookmark, Object: b})
}

// expire ends every open watch with a 410 ERROR event.
func (s *fakeServer) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broadcastLocked(api.Event{Type: api.Error, Status: api.NewResourceExpired(fmt.Sprintf("too old resource version: 1 (%d)", s.rv))})
	for _, w := range s.watches {
		w.serverClose()
	}
	s.watches = nil
}

// closeWatches ends every open watch cleanly, like a server timeout.
func (s *fakeServer) closeWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watches {
		w.serverClose()
	}
	s.watches = nil
}

func (s *fakeServer) broadcastLocked(ev api.Event) {
	for _, w := range s.watches {
		w.push(ev)
	}
}

func (s *fakeServer) forget(w *fakeWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.watches, w); i >= 0 {
		s.watches = slices.Delete(s.watches, i, i+1)
	}
}

// waitWatch waits until a watch has been opened and returns its options.
func (s *fakeServer) waitWatch(t *testing.T) api.ListOptions {
	t.Helper()
	select {
	case o := <-s.opened:
		return o
	case <-time.After(waitTimeout):
		t.Fatal("no watch was opened")
		return api.ListOptions{}
	}
}

// fakeWatch is one open watch: an unbounded queue pumped into ResultChan.
type fakeWatch struct {
	srv      *fakeServer
	out      chan api.Event
	mu       sync.Mutex
	queue    []api.Event
	ended    bool // the server closed it
	wake     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
}

func newFakeWatch(s *fakeServer) *fakeWatch {
	w := &fakeWatch{srv: s, out: make(chan api.Event), wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go w.pump()
	return w
}

func (w *fakeWatch) push(ev api.Event) {
	w.mu.Lock()
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	w.poke()
}

func (w *fakeWatch) serverClose() {
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
	w.poke()
}

func (w *fakeWatch) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *fakeWatch) pump() {
	defer close(w.out)
	for {
		w.mu.Lock()
		var ev api.Event
		have := len(w.queue) > 0
		if have {
			ev, w.queue = w.queue[0], w.queue[1:]
		}
		ended := w.ended
		w.mu.Unlock()
		switch {
		case have:
			select {
			case w.out <- ev:
			case <-w.stopped:
				return
			}
		case ended:
			return
		default:
			select {
			case <-w.wake:
			case <-w.stopped:
				return
			}
		}
	}
}

func (w *fakeWatch) ResultChan() <-chan api.Event { return w.out }

func (w *fakeWatch) Stop() {
	w.stopOnce.Do(func() {
		close(w.stopped)
		w.srv.forget(w)
	})
}

// recorder is a handler that records every call as a line and can be
// slowed down by a gate.
type recorder struct {
	mu    sync.Mutex
	lines []string
	calls chan string
	gate  chan struct{} // if not nil, every call waits for a value or close
}

func newRecorder() *recorder { return &recorder{calls: make(chan string, 100000)} }

func (r *recorder) record(line string) {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	r.calls <- line
}

func (r *recorder) OnAdd(obj *api.Object, initial bool) {
	r.record(fmt.Sprintf("add %s %s initial=%t", obj.Key(), obj.Metadata.ResourceVersion, initial))
}

func (r *recorder) OnUpdate(old, obj *api.Object) {
	r.record(fmt.Sprintf("update %s %s→%s", obj.Key(), old.Metadata.ResourceVersion, obj.Metadata.ResourceVersion))
}

func (r *recorder) OnDelete(obj any) {
	key, _ := fifo.KeyOf(obj)
	rv := "?"
	if o := ObjectOf(obj); o != nil {
		rv = o.Metadata.ResourceVersion
	}
	r.record(fmt.Sprintf("delete %s %s (%T)", key, rv, obj))
}

// expect asserts the next calls, in order.
func (r *recorder) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-r.calls:
			if got != w {
				t.Fatalf("handler call: got %q, want %q", got, w)
			}
		case <-time.After(waitTimeout):
			t.Fatalf("timed out waiting for handler call %q", w)
		}
	}
}

// expectSet asserts the next len(want) calls, in any order.
func (r *recorder) expectSet(t *testing.T, want ...string) {
	t.Helper()
	var got []string
	for range want {
		select {
		case g := <-r.calls:
			got = append(got, g)
		case <-time.After(waitTimeout):
			t.Fatalf("timed out waiting for handler calls; got %q, want %q", got, want)
		}
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Fatalf("handler calls: got %q, want %q", got, want)
	}
}
