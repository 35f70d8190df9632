package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/store"
)

// eventTimeout bounds every wait for a watch event. A networked store
// delivers within milliseconds; the bound only turns a hang into a failure,
// so it is generous enough for a busy machine under -race.
const eventTimeout = 2 * time.Minute

// Run runs the conformance suite, each test as a subtest with a store of its
// own from newStore (which should arrange for its cleanup with t.Cleanup).
func Run(t *testing.T, newStore func(t *testing.T) store.Interface) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Interface)
	}{
		{"CreateGet", testCreateGet},
		{"BadInput", testBadInput},
		{"RevisionsIncrease", testRevisionsIncrease},
		{"Update", testUpdate},
		{"GuaranteedUpdate", testGuaranteedUpdate},
		{"GuaranteedUpdateNoop", testGuaranteedUpdateNoop},
		{"GuaranteedUpdateConcurrent", testGuaranteedUpdateConcurrent},
		{"Delete", testDelete},
		{"ListPrefixAndOrder", testListPrefixAndOrder},
		{"ListPaging", testListPaging},
		{"ListFilter", testListFilter},
		{"ListAtPastRevision", testListAtPastRevision},
		{"ListFutureRevision", testListFutureRevision},
		{"Watch", testWatch},
		{"WatchFromPast", testWatchFromPast},
		{"WatchStop", testWatchStop},
		{"WatchProgress", testWatchProgress},
		{"Compaction", testCompaction},
		{"ContextCancelled", testContextCancelled},
		{"Close", testClose},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

// prefixes hands each test a key prefix of its own, so stores that share a
// server do not see each other's keys.
var prefixes struct {
	mu sync.Mutex
	n  int
}

func prefixFor(t *testing.T) string {
	prefixes.mu.Lock()
	defer prefixes.mu.Unlock()
	prefixes.n++
	return fmt.Sprintf("/registry/storetest-%d-%d/", time.Now().UnixNano(), prefixes.n)
}

// configMap builds a ConfigMap whose data holds one value.
func configMap(ns, name, value string) *api.Object {
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: ns, Name: name}}
	if err := o.Set("data", []byte(`{"v":`+strconv.Quote(value)+`}`)); err != nil {
		panic(err)
	}
	return o
}

func valueOf(t *testing.T, o *api.Object) string {
	t.Helper()
	return string(o.Get("data"))
}

func rv(t *testing.T, o *api.Object) int64 {
	t.Helper()
	n, err := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	require.NoError(t, err, "resourceVersion %q", o.Metadata.ResourceVersion)
	return n
}

func create(t *testing.T, s store.Interface, key, value string) *api.Object {
	t.Helper()
	o, err := s.Create(context.Background(), key, configMap("ns", path.Base(key), value))
	require.NoError(t, err)
	return o
}

func names(objs []*api.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Metadata.Name
	}
	return out
}

// next reads the next change from w, skipping progress events.
func next(t *testing.T, w store.Watcher) store.Event {
	t.Helper()
	timeout := time.After(eventTimeout)
	for {
		select {
		case ev, ok := <-w.Events():
			require.True(t, ok, "watch ended early: %v", w.Err())
			if ev.IsProgress() {
				continue
			}
			return ev
		case <-timeout:
			require.FailNow(t, "no watch event in time")
		}
	}
}

// closed waits for w's channel to close, discarding what is still queued.
func closed(t *testing.T, w store.Watcher) {
	t.Helper()
	timeout := time.After(eventTimeout)
	for {
		select {
		case _, ok := <-w.Events():
			if !ok {
				return
			}
		case <-timeout:
			require.FailNow(t, "watch not closed in time")
		}
	}
}

func testCreateGet(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	in := configMap("ns", "a", "1")
	in.Metadata.UID = "forged"
	in.Metadata.ResourceVersion = "12345"
	created, err := s.Create(ctx, p+"ns/a", in)
	require.NoError(t, err)
	assert.NotEqual(t, "forged", created.Metadata.UID, "the store chooses the uid")
	assert.Len(t, created.Metadata.UID, 36)
	assert.Positive(t, rv(t, created))
	assert.False(t, created.Metadata.CreationTimestamp.IsZero())
	assert.Equal(t, "forged", in.Metadata.UID, "the caller's object is not changed")

	got, err := s.Get(ctx, p+"ns/a")
	require.NoError(t, err)
	assert.Equal(t, created.Metadata, got.Metadata)
	assert.Equal(t, valueOf(t, created), valueOf(t, got))
	assert.Equal(t, "ConfigMap", got.Kind)

	_, err = s.Create(ctx, p+"ns/a", configMap("ns", "a", "2"))
	require.ErrorIs(t, err, store.ErrAlreadyExists)
	_, err = s.Get(ctx, p+"ns/missing")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func testBadInput(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	_, err := s.Create(ctx, "", configMap("ns", "a", "1"))
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.Create(ctx, p+"ns/a", nil)
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.GuaranteedUpdate(ctx, p+"ns/a", nil)
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.Delete(ctx, "", store.Preconditions{})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.List(ctx, p, store.ListOptions{Revision: -1})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.List(ctx, p, store.ListOptions{Limit: -1})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = s.Watch(ctx, p, -1)
	assert.ErrorIs(t, err, store.ErrInvalid)
}

func testRevisionsIncrease(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	before, err := s.CurrentRevision(ctx)
	require.NoError(t, err)
	a := create(t, s, p+"ns/a", "1")
	b := create(t, s, p+"ns/b", "1")
	assert.Greater(t, rv(t, a), before)
	assert.Greater(t, rv(t, b), rv(t, a), "every write makes a new, higher revision of the whole store")
	after, err := s.CurrentRevision(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, after, rv(t, b), "a consistent read sees every write before it")
	l, err := s.List(ctx, p, store.ListOptions{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, l.Revision, rv(t, b))
}

func testUpdate(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	a := create(t, s, p+"ns/a", "1")

	_, err := s.Update(ctx, p+"ns/a", configMap("ns", "a", "x"), store.Preconditions{ResourceVersion: rv(t, a) + 100})
	require.ErrorIs(t, err, store.ErrConflict)
	_, err = s.Update(ctx, p+"ns/a", configMap("ns", "a", "x"), store.Preconditions{UID: "not-the-uid"})
	require.ErrorIs(t, err, store.ErrConflict)
	_, err = s.Update(ctx, p+"ns/missing", configMap("ns", "missing", "x"), store.Preconditions{})
	require.ErrorIs(t, err, store.ErrNotFound)

	u, err := s.Update(ctx, p+"ns/a", configMap("ns", "a", "2"), store.Preconditions{ResourceVersion: rv(t, a), UID: a.Metadata.UID})
	require.NoError(t, err)
	assert.Greater(t, rv(t, u), rv(t, a))
	assert.Equal(t, a.Metadata.UID, u.Metadata.UID, "uid is kept")
	assert.True(t, a.Metadata.CreationTimestamp.Equal(u.Metadata.CreationTimestamp), "creationTimestamp is kept")
	got, err := s.Get(ctx, p+"ns/a")
	require.NoError(t, err)
	assert.Equal(t, u.Metadata.ResourceVersion, got.Metadata.ResourceVersion)
	assert.Equal(t, `{"v":"2"}`, valueOf(t, got))
}

func testGuaranteedUpdate(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	a := create(t, s, p+"ns/a", "1")
	u, err := s.GuaranteedUpdate(ctx, p+"ns/a", func(cur *api.Object) (*api.Object, error) {
		assert.Equal(t, a.Metadata.ResourceVersion, cur.Metadata.ResourceVersion)
		cur.Metadata.Labels = map[string]string{"app": "x"}
		return cur, nil
	})
	require.NoError(t, err)
	assert.Greater(t, rv(t, u), rv(t, a))
	assert.Equal(t, map[string]string{"app": "x"}, u.Metadata.Labels)
	assert.Equal(t, a.Metadata.UID, u.Metadata.UID)

	boom := errors.New("boom")
	_, err = s.GuaranteedUpdate(ctx, p+"ns/a", func(*api.Object) (*api.Object, error) { return nil, boom })
	require.ErrorIs(t, err, boom, "tryUpdate's error is returned")
	_, err = s.GuaranteedUpdate(ctx, p+"ns/missing", func(cur *api.Object) (*api.Object, error) { return cur, nil })
	require.ErrorIs(t, err, store.ErrNotFound)
}

func testGuaranteedUpdateNoop(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	a := create(t, s, p+"ns/a", "1")
	w, err := s.Watch(ctx, p, rv(t, a))
	require.NoError(t, err)
	defer w.Stop()

	same, err := s.GuaranteedUpdate(ctx, p+"ns/a", func(cur *api.Object) (*api.Object, error) { return cur, nil })
	require.NoError(t, err)
	assert.Equal(t, a.Metadata.ResourceVersion, same.Metadata.ResourceVersion, "a no-op update writes nothing")

	b := create(t, s, p+"ns/b", "1")
	ev := next(t, w)
	assert.Equal(t, api.Added, ev.Type, "the no-op made no event")
	assert.Equal(t, p+"ns/b", ev.Key)
	assert.Equal(t, rv(t, b), ev.Revision)
}

func testGuaranteedUpdateConcurrent(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	create(t, s, p+"ns/n", "0")
	const workers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				_, err := s.GuaranteedUpdate(ctx, p+"ns/n", func(cur *api.Object) (*api.Object, error) {
					var v struct{ V string }
					if err := json.Unmarshal(cur.Get("data"), &v); err != nil {
						return nil, err
					}
					n, err := strconv.Atoi(v.V)
					if err != nil {
						return nil, err
					}
					if err := cur.Set("data", []byte(`{"v":"`+strconv.Itoa(n+1)+`"}`)); err != nil {
						return nil, err
					}
					return cur, nil
				})
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := s.Get(ctx, p+"ns/n")
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf(`{"v":"%d"}`, workers*each), valueOf(t, got), "no increment lost to a race")
}

func testDelete(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	a := create(t, s, p+"ns/a", "1")
	_, err := s.Delete(ctx, p+"ns/a", store.Preconditions{ResourceVersion: rv(t, a) + 100})
	require.ErrorIs(t, err, store.ErrConflict)
	_, err = s.Delete(ctx, p+"ns/a", store.Preconditions{UID: "other"})
	require.ErrorIs(t, err, store.ErrConflict)

	last, err := s.Delete(ctx, p+"ns/a", store.Preconditions{ResourceVersion: rv(t, a), UID: a.Metadata.UID})
	require.NoError(t, err)
	assert.Equal(t, a.Metadata.ResourceVersion, last.Metadata.ResourceVersion, "the last state, as last written")
	_, err = s.Get(ctx, p+"ns/a")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.Delete(ctx, p+"ns/a", store.Preconditions{})
	require.ErrorIs(t, err, store.ErrNotFound)
}

func testListPrefixAndOrder(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	for _, k := range []string{"ns/c", "ns/a", "ns/b", "nt/d"} {
		create(t, s, p+k, "1")
	}
	create(t, s, p[:len(p)-1]+"x/ns/e", "1") // shares the prefix without its slash
	l, err := s.List(ctx, p, store.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c", "d"}, names(l.Items), "key order, only under the prefix")
	assert.Empty(t, l.NextKey)

	l, err = s.List(ctx, p+"ns/", store.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, names(l.Items))

	l, err = s.List(ctx, p+"none/", store.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, l.Items)
	assert.Positive(t, l.Revision, "an empty list still has a revision")
}

func testListPaging(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		create(t, s, p+"ns/"+k, "1")
	}
	first, err := s.List(ctx, p, store.ListOptions{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, names(first.Items))
	require.NotEmpty(t, first.NextKey)
	assert.Equal(t, int64(3), first.Remaining)

	// Writes after the first page do not show in the next ones: the
	// continue reads at the first page's revision.
	_, err = s.Delete(ctx, p+"ns/c", store.Preconditions{})
	require.NoError(t, err)
	create(t, s, p+"ns/cc", "1")

	second, err := s.List(ctx, p, store.ListOptions{Limit: 2, Revision: first.Revision, StartKey: first.NextKey})
	require.NoError(t, err)
	assert.Equal(t, first.Revision, second.Revision)
	assert.Equal(t, []string{"c", "d"}, names(second.Items))
	assert.Equal(t, int64(1), second.Remaining)

	third, err := s.List(ctx, p, store.ListOptions{Limit: 2, Revision: first.Revision, StartKey: second.NextKey})
	require.NoError(t, err)
	assert.Equal(t, []string{"e"}, names(third.Items))
	assert.Empty(t, third.NextKey, "the last page says nothing follows")
	assert.Zero(t, third.Remaining)

	now, err := s.List(ctx, p, store.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "cc", "d", "e"}, names(now.Items))
}

func testListFilter(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	for i, k := range []string{"a", "b", "c", "d", "e", "f"} {
		create(t, s, p+"ns/"+k, strconv.Itoa(i%2))
	}
	odd := func(o *api.Object) bool { return string(o.Get("data")) == `{"v":"1"}` }
	l, err := s.List(ctx, p, store.ListOptions{Filter: odd, Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "d"}, names(l.Items), "the limit counts kept objects")
	require.NotEmpty(t, l.NextKey)
	rest, err := s.List(ctx, p, store.ListOptions{Filter: odd, Limit: 2, Revision: l.Revision, StartKey: l.NextKey})
	require.NoError(t, err)
	assert.Equal(t, []string{"f"}, names(rest.Items))
}

func testListAtPastRevision(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	a := create(t, s, p+"ns/a", "1")
	create(t, s, p+"ns/b", "1")
	then, err := s.List(ctx, p, store.ListOptions{})
	require.NoError(t, err)

	_, err = s.Update(ctx, p+"ns/a", configMap("ns", "a", "2"), store.Preconditions{})
	require.NoError(t, err)
	_, err = s.Delete(ctx, p+"ns/b", store.Preconditions{})
	require.NoError(t, err)
	create(t, s, p+"ns/c", "1")

	past, err := s.List(ctx, p, store.ListOptions{Revision: then.Revision})
	require.NoError(t, err)
	assert.Equal(t, then.Revision, past.Revision)
	assert.Equal(t, []string{"a", "b"}, names(past.Items), "the state at that revision, deleted key included")
	assert.Equal(t, `{"v":"1"}`, valueOf(t, past.Items[0]))
	assert.Equal(t, a.Metadata.ResourceVersion, past.Items[0].Metadata.ResourceVersion)
}

func testListFutureRevision(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	cur, err := s.CurrentRevision(ctx)
	require.NoError(t, err)
	_, err = s.List(ctx, p, store.ListOptions{Revision: cur + 1000})
	var future *store.FutureRevisionError
	require.ErrorAs(t, err, &future)
	assert.Equal(t, cur+1000, future.Requested)
	assert.GreaterOrEqual(t, future.Current, cur)
	assert.ErrorIs(t, err, store.ErrFutureRevision)
}

func testWatch(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	start, err := s.CurrentRevision(ctx)
	require.NoError(t, err)
	w, err := s.Watch(ctx, p+"ns/", start)
	require.NoError(t, err)
	defer w.Stop()

	a := create(t, s, p+"ns/a", "1")
	create(t, s, p+"other/x", "1") // outside the watched prefix
	u, err := s.Update(ctx, p+"ns/a", configMap("ns", "a", "2"), store.Preconditions{})
	require.NoError(t, err)
	last, err := s.Delete(ctx, p+"ns/a", store.Preconditions{})
	require.NoError(t, err)

	ev := next(t, w)
	assert.Equal(t, api.Added, ev.Type)
	assert.Equal(t, p+"ns/a", ev.Key)
	assert.Equal(t, rv(t, a), ev.Revision)
	assert.Equal(t, a.Metadata.ResourceVersion, ev.Object.Metadata.ResourceVersion)
	assert.Nil(t, ev.PrevObject)

	ev = next(t, w)
	assert.Equal(t, api.Modified, ev.Type)
	assert.Equal(t, rv(t, u), ev.Revision)
	assert.Equal(t, `{"v":"2"}`, valueOf(t, ev.Object))
	require.NotNil(t, ev.PrevObject)
	assert.Equal(t, `{"v":"1"}`, valueOf(t, ev.PrevObject))

	ev = next(t, w)
	assert.Equal(t, api.Deleted, ev.Type)
	assert.Greater(t, ev.Revision, rv(t, u))
	assert.Equal(t, strconv.FormatInt(ev.Revision, 10), ev.Object.Metadata.ResourceVersion,
		"a deleted object carries the deletion's revision")
	assert.Equal(t, last.Metadata.UID, ev.Object.Metadata.UID)
	assert.Equal(t, `{"v":"2"}`, valueOf(t, ev.Object), "the last state")
	require.NotNil(t, ev.PrevObject)
	assert.Equal(t, u.Metadata.ResourceVersion, ev.PrevObject.Metadata.ResourceVersion)
}

func testWatchFromPast(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	a := create(t, s, p+"ns/a", "1")
	b := create(t, s, p+"ns/b", "1")
	c := create(t, s, p+"ns/c", "1")
	w, err := s.Watch(ctx, p, rv(t, a))
	require.NoError(t, err)
	defer w.Stop()
	assert.Equal(t, rv(t, b), next(t, w).Revision, "replays every change after the revision, not at it")
	assert.Equal(t, rv(t, c), next(t, w).Revision)
	d := create(t, s, p+"ns/d", "1")
	assert.Equal(t, rv(t, d), next(t, w).Revision, "then live")
}

func testWatchStop(t *testing.T, s store.Interface) {
	p := prefixFor(t)
	cur, err := s.CurrentRevision(context.Background())
	require.NoError(t, err)
	w, err := s.Watch(context.Background(), p, cur)
	require.NoError(t, err)
	w.Stop()
	w.Stop() // idempotent
	closed(t, w)
	assert.NoError(t, w.Err(), "a stopped watch ended by request, not by failure")

	ctx, cancel := context.WithCancel(context.Background())
	w, err = s.Watch(ctx, p, cur)
	require.NoError(t, err)
	cancel()
	closed(t, w)
	assert.NoError(t, w.Err())
	w.Stop()
}

func testWatchProgress(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	a := create(t, s, p+"ns/a", "1")
	w, err := s.Watch(ctx, p+"ns/", rv(t, a))
	require.NoError(t, err)
	defer w.Stop()
	// A write elsewhere moves the revision without an event for w; progress
	// is how w learns that nothing of its own happened up to there.
	other := create(t, s, p+"other/x", "1")

	deadline := time.After(eventTimeout)
	retry := time.NewTicker(50 * time.Millisecond)
	defer retry.Stop()
	require.NoError(t, w.RequestProgress(ctx))
	for {
		select {
		case ev, ok := <-w.Events():
			require.True(t, ok, "watch ended: %v", w.Err())
			require.True(t, ev.IsProgress(), "no change under the prefix, got %s %s", ev.Type, ev.Key)
			assert.Empty(t, ev.Key)
			assert.Nil(t, ev.Object)
			if ev.Revision >= rv(t, other) {
				return
			}
		case <-retry.C:
			// A store may skip a request it cannot answer yet.
			require.NoError(t, w.RequestProgress(ctx))
		case <-deadline:
			require.FailNow(t, "no progress event reaching the other write's revision")
		}
	}
}

func testCompaction(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	a := create(t, s, p+"ns/a", "1")
	before, err := s.List(ctx, p, store.ListOptions{})
	require.NoError(t, err)
	_, err = s.Update(ctx, p+"ns/a", configMap("ns", "a", "2"), store.Preconditions{})
	require.NoError(t, err)
	b := create(t, s, p+"ns/b", "1")
	at := rv(t, b)

	require.NoError(t, s.Compact(at))
	assert.GreaterOrEqual(t, s.CompactedRevision(), at)

	_, err = s.List(ctx, p, store.ListOptions{Revision: before.Revision})
	var compacted *store.CompactedError
	require.ErrorAs(t, err, &compacted, "a list below the compaction")
	assert.ErrorIs(t, err, store.ErrCompacted)
	assert.Equal(t, before.Revision, compacted.Requested)

	_, err = s.Watch(ctx, p, rv(t, a))
	require.ErrorIs(t, err, store.ErrCompacted, "a watch from below the compaction")

	l, err := s.List(ctx, p, store.ListOptions{Revision: at})
	require.NoError(t, err, "the compacted revision itself stays readable")
	assert.Equal(t, []string{"a", "b"}, names(l.Items))
	w, err := s.Watch(ctx, p, at)
	require.NoError(t, err, "a watch from the compacted revision on")
	c := create(t, s, p+"ns/c", "1")
	assert.Equal(t, rv(t, c), next(t, w).Revision)
	w.Stop()

	err = s.Compact(at)
	require.ErrorIs(t, err, store.ErrCompacted, "compacting again at the same revision")
	cur, err := s.CurrentRevision(ctx)
	require.NoError(t, err)
	err = s.Compact(cur + 1000)
	require.ErrorIs(t, err, store.ErrFutureRevision)
}

func testContextCancelled(t *testing.T, s store.Interface) {
	p := prefixFor(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Create(ctx, p+"ns/a", configMap("ns", "a", "1"))
	assert.ErrorIs(t, err, context.Canceled)
	_, err = s.Get(ctx, p+"ns/a")
	assert.ErrorIs(t, err, context.Canceled)
	_, err = s.List(ctx, p, store.ListOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	_, err = s.CurrentRevision(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = s.Get(context.Background(), p+"ns/a")
	assert.ErrorIs(t, err, store.ErrNotFound, "a cancelled create wrote nothing")
}

func testClose(t *testing.T, s store.Interface) {
	ctx := context.Background()
	p := prefixFor(t)
	a := create(t, s, p+"ns/a", "1")
	w, err := s.Watch(ctx, p, rv(t, a))
	require.NoError(t, err)
	s.Close()
	closed(t, w)
	assert.ErrorIs(t, w.Err(), store.ErrClosed)
	w.Stop()
	_, err = s.Create(ctx, p+"ns/b", configMap("ns", "b", "1"))
	assert.ErrorIs(t, err, store.ErrClosed)
	_, err = s.Get(ctx, p+"ns/a")
	assert.ErrorIs(t, err, store.ErrClosed)
	s.Close() // idempotent
}
