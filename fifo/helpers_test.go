package fifo

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// obj is a ConfigMap default/name at resourceVersion rv.
func obj(name, rv string) *api.Object {
	return &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{
		Namespace: "default", Name: name, ResourceVersion: rv,
	}}
}

// tomb is the tombstone Replace builds for default/name from o.
func tomb(name string, o *api.Object) DeletedFinalStateUnknown {
	return DeletedFinalStateUnknown{Key: "default/" + name, Obj: o}
}

// knownStore is a fake consumer cache (the informer's Indexer).
type knownStore struct {
	mu   sync.Mutex
	objs map[string]*api.Object
}

func newKnown(objs ...*api.Object) *knownStore {
	k := &knownStore{objs: map[string]*api.Object{}}
	for _, o := range objs {
		k.objs[o.Key()] = o
	}
	return k
}

func (k *knownStore) ListKeys() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := make([]string, 0, len(k.objs))
	for key := range k.objs {
		keys = append(keys, key)
	}
	slices.Sort(keys) // deterministic tombstone order in tests
	return keys
}

func (k *knownStore) GetByKey(key string) (*api.Object, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	o, ok := k.objs[key]
	return o, ok
}

// listOnly lists keys it cannot return, like a cache changing under us.
type listOnly []string

func (l listOnly) ListKeys() []string                  { return l }
func (l listOnly) GetByKey(string) (*api.Object, bool) { return nil, false }

// queueKind builds one of the two queues; tests that describe shared
// behaviour run over both.
type queueKind struct {
	name string
	new  func(Options) Queue
}

var queueKinds = []queueKind{
	{"DeltaFIFO", func(o Options) Queue { return NewDeltaFIFO(o) }},
	{"RealFIFO", func(o Options) Queue { return NewRealFIFO(o) }},
}

// popped is what one Pop handed over.
type popped struct {
	deltas  Deltas
	initial bool
}

// safetyTimeout only turns a hang into a failure. It is no bound on how fast
// anything must be: on a busy machine under -race the code under test
// answers in far less, and a test that needs something waits for it.
const safetyTimeout = 2 * time.Minute

// pop pops one item that must already be queued.
func pop(t *testing.T, q Queue) popped {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	var p popped
	require.NoError(t, q.Pop(ctx, func(d Deltas, initial bool) error {
		p = popped{d, initial}
		return nil
	}))
	return p
}

// popAll pops until the queue is empty and returns each item's deltas.
func popAll(t *testing.T, q Queue) []Deltas {
	t.Helper()
	var out []Deltas
	for q.Len() > 0 {
		out = append(out, pop(t, q).deltas)
	}
	return out
}

// rvs renders deltas as resourceVersions, e.g. [10 11 13].
func rvs(d Deltas) []string {
	out := make([]string, len(d))
	for i, x := range d {
		out[i] = resourceVersionOf(x.Object)
	}
	return out
}

// flatten turns popped items into one delta stream, for comparing the two
// queues where only the grouping differs.
func flatten(items []Deltas) Deltas {
	var out Deltas
	for _, d := range items {
		out = append(out, d...)
	}
	return out
}
