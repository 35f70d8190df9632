package reflector

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/client"
)

// waitTimeout bounds every wait in these tests; none is expected to come
// close to it. It only turns a hang into a failure, so it is generous
// enough for a busy machine under -race.
const waitTimeout = 2 * time.Minute

// request is one call a fakeLW received.
type request struct {
	verb string // "list" or "watch"
	opts api.ListOptions
}

func (r request) String() string {
	o := r.opts
	s := fmt.Sprintf("%s rv=%q limit=%d", r.verb, o.ResourceVersion, o.Limit)
	if o.Continue != "" {
		s += " continue=" + o.Continue
	}
	return s
}

// fakeLW is a scripted ListerWatcher. Lists answer from a queue of
// scripted results (and block until ctx is done when it runs dry); watches
// answer from a queue of scripted errors and otherwise open a fakeWatcher
// the test drives. Every call is reported on requests, in order, so a test
// can assert what the Reflector asked for and when.
type fakeLW struct {
	mu         sync.Mutex
	lists      []func(api.ListOptions) (*api.List, error)
	watchErrs  []error
	requests   chan request
	watches    chan *fakeWatcher
	listCalls  int
	watchCalls int
}

func newFakeLW() *fakeLW {
	return &fakeLW{requests: make(chan request, 1000), watches: make(chan *fakeWatcher, 1000)}
}

// onList scripts the next list answers, in order.
func (f *fakeLW) onList(answers ...func(api.ListOptions) (*api.List, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists = append(f.lists, answers...)
}

// onWatchError scripts the next Watch calls to fail, in order.
func (f *fakeLW) onWatchError(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchErrs = append(f.watchErrs, errs...)
}

func (f *fakeLW) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	f.mu.Lock()
	f.listCalls++
	var answer func(api.ListOptions) (*api.List, error)
	if len(f.lists) > 0 {
		answer, f.lists = f.lists[0], f.lists[1:]
	}
	f.mu.Unlock()
	f.requests <- request{"list", opts}
	if answer == nil {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return answer(opts)
}

func (f *fakeLW) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	f.mu.Lock()
	f.watchCalls++
	var err error
	if len(f.watchErrs) > 0 {
		err, f.watchErrs = f.watchErrs[0], f.watchErrs[1:]
	}
	f.mu.Unlock()
	f.requests <- request{"watch", opts}
	if err != nil {
		return nil, err
	}
	w := newFakeWatcher(opts)
	f.watches <- w
	return w, nil
}

func (f *fakeLW) counts() (lists, watches int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listCalls, f.watchCalls
}

// next returns the next request the Reflector made.
func (f *fakeLW) next(t *testing.T) request {
	t.Helper()
	select {
	case r := <-f.requests:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("timed out waiting for a list or watch request")
		return request{}
	}
}

// nextWatch returns the next watch the Reflector opened.
func (f *fakeLW) nextWatch(t *testing.T) *fakeWatcher {
	t.Helper()
	select {
	case w := <-f.watches:
		return w
	case <-time.After(waitTimeout):
		t.Fatal("timed out waiting for a watch")
		return nil
	}
}

// fakeWatcher is a watch the test drives: send delivers an event, close
// ends the stream as a server's timeout would.
type fakeWatcher struct {
	opts     api.ListOptions
	in       chan api.Event
	out      chan api.Event
	stopped  chan struct{}
	stopOnce sync.Once
	inOnce   sync.Once
}

func newFakeWatcher(opts api.ListOptions) *fakeWatcher {
	w := &fakeWatcher{opts: opts, in: make(chan api.Event), out: make(chan api.Event), stopped: make(chan struct{})}
	go w.forward()
	return w
}

// forward relays events from the test to ResultChan and closes ResultChan
// when the test closes the stream or the Reflector stops the watch.
func (w *fakeWatcher) forward() {
	defer close(w.out)
	for {
		select {
		case ev, ok := <-w.in:
			if !ok {
				return
			}
			select {
			case w.out <- ev:
			case <-w.stopped:
				return
			}
		case <-w.stopped:
			return
		}
	}
}

func (w *fakeWatcher) ResultChan() <-chan api.Event { return w.out }
func (w *fakeWatcher) Stop()                        { w.stopOnce.Do(func() { close(w.stopped) }) }

// send delivers ev and waits until the Reflector has received it.
func (w *fakeWatcher) send(t *testing.T, ev api.Event) {
	t.Helper()
	select {
	case w.in <- ev:
	case <-time.After(waitTimeout):
		t.Fatal("timed out sending a watch event")
	}
}

// close ends the stream cleanly, as a server whose timeout ran out.
func (w *fakeWatcher) close() { w.inOnce.Do(func() { close(w.in) }) }

// isStopped reports whether the Reflector stopped this watch.
func (w *fakeWatcher) waitStopped(t *testing.T) {
	t.Helper()
	select {
	case <-w.stopped:
	case <-time.After(waitTimeout):
		t.Fatal("the Reflector did not stop the watch")
	}
}

// recordingStore records what the Reflector did to it, one line per call.
type recordingStore struct {
	ops     chan string
	mu      sync.Mutex
	failAdd error
}

func newRecordingStore() *recordingStore { return &recordingStore{ops: make(chan string, 1000)} }

func (s *recordingStore) Add(o *api.Object) error {
	s.ops <- "add " + o.Key() + " " + o.Metadata.ResourceVersion
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failAdd
}

func (s *recordingStore) Update(o *api.Object) error {
	s.ops <- "update " + o.Key() + " " + o.Metadata.ResourceVersion
	return nil
}

func (s *recordingStore) Delete(o *api.Object) error {
	s.ops <- "delete " + o.Key() + " " + o.Metadata.ResourceVersion
	return nil
}

func (s *recordingStore) Replace(list []*api.Object, rv string) error {
	keys := make([]string, 0, len(list))
	for _, o := range list {
		keys = append(keys, o.Key())
	}
	s.ops <- "replace [" + strings.Join(keys, " ") + "] " + rv
	return nil
}

func (s *recordingStore) Resync() error {
	s.ops <- "resync"
	return nil
}

// expect asserts the next operations, in order.
func (s *recordingStore) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-s.ops:
			require.Equal(t, w, got)
		case <-time.After(waitTimeout):
			t.Fatalf("timed out waiting for store operation %q", w)
		}
	}
}

// obj builds a ConfigMap-like object.
func obj(name, rv string) *api.Object {
	return &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// listOf answers a list with these items at rv, with an optional continue.
func listOf(rv, cont string, items ...*api.Object) func(api.ListOptions) (*api.List, error) {
	return func(api.ListOptions) (*api.List, error) {
		return &api.List{Kind: "ConfigMapList", APIVersion: "v1",
			Metadata: api.ListMeta{ResourceVersion: rv, Continue: cont}, Items: slices.Clone(items)}, nil
	}
}

// fails answers a list with err.
func fails(err error) func(api.ListOptions) (*api.List, error) {
	return func(api.ListOptions) (*api.List, error) { return nil, err }
}

func added(o *api.Object) api.Event    { return api.Event{Type: api.Added, Object: o} }
func modified(o *api.Object) api.Event { return api.Event{Type: api.Modified, Object: o} }
func deleted(o *api.Object) api.Event  { return api.Event{Type: api.Deleted, Object: o} }
func bookmark(rv string) api.Event {
	return api.Event{Type: api.Bookmark, Object: &api.Object{Metadata: api.ObjectMeta{ResourceVersion: rv}}}
}
func errorEvent(s *api.Status) api.Event { return api.Event{Type: api.Error, Status: s} }
