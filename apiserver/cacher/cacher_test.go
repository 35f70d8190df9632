package cacher

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
	"listwatch/store"
)

func TestNewRejectsBadConfig(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	s := store.New(store.Options{})
	defer s.Close()
	for name, cfg := range map[string]Config{
		"no store":    {Prefix: testPrefix, Kind: "ConfigMap", APIVersion: "v1"},
		"no prefix":   {Store: s, Kind: "ConfigMap", APIVersion: "v1"},
		"no kind":     {Store: s, Prefix: testPrefix},
		"neg history": {Store: s, Prefix: testPrefix, Kind: "ConfigMap", APIVersion: "v1", HistorySize: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(context.Background(), cfg)
			require.Error(t, err)
		})
	}
}

func TestReplayFromInsideTheBufferIsExact(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{HistorySize: 64})
	var objs []*api.Object
	for i := range 10 {
		objs = append(objs, e.create("default", fmt.Sprintf("cm%02d", i), nil, "v0"))
	}
	upd := e.update("default", "cm03", nil, "v1")
	e.delete("default", "cm04")
	delRev := e.s.Revision()
	e.waitRev(delRev)

	from := rv(objs[5]) // every change after cm05's create
	w := e.watch(WatchOptions{ResourceVersion: from, RVSet: true})
	got := frames(t, w, 6)

	want := [][]byte{}
	for _, o := range objs[6:] {
		want = append(want, frameOf(api.Added, o))
	}
	want = append(want, frameOf(api.Modified, upd))
	deleted := *objs[4]
	deleted.Metadata.ResourceVersion = strconv.FormatInt(delRev, 10)
	want = append(want, frameOf(api.Deleted, &deleted))
	for i := range want {
		assert.Equal(t, string(want[i]), string(got[i]), "frame %d", i)
	}
	quiet(t, w)

	// Then live events follow the replay.
	live := e.create("default", "after", nil, "x")
	assert.Equal(t, string(frameOf(api.Added, live)), string(frames(t, w, 1)[0]))
}

func frameOf(typ api.EventType, o *api.Object) []byte {
	ev := api.Event{Type: typ, Object: o}
	return append(ev.AppendJSON(nil), '\n')
}

func TestWatchFromBeforeTheBufferIs410(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	want := fixtureLines(t, "watch-410-too-old-rv.jsonl")
	require.Len(t, want, 1)

	t.Run("older than the cache's list", func(t *testing.T) {
		// Like the recording: the cache started (listed) at some revision
		// and nothing was dropped yet; a watch from before that is too old.
		s := store.New(store.Options{})
		defer s.Close()
		var last *api.Object
		for i := range 5 {
			var err error
			last, err = s.Create(context.Background(), key("ns", fmt.Sprint(i)), configMap("ns", fmt.Sprint(i), nil, ""))
			require.NoError(t, err)
		}
		c, err := New(context.Background(), Config{Store: s, Prefix: testPrefix, Kind: "ConfigMap", APIVersion: "v1",
			Resource: api.GroupResource{Resource: "configmaps"}})
		require.NoError(t, err)
		defer c.Stop()
		listRev := rv(last)

		w, err := c.Watch(context.Background(), WatchOptions{ResourceVersion: 2, RVSet: true})
		require.NoError(t, err)
		got, err := w.Next(context.Background(), nil)
		require.ErrorIs(t, err, ErrStatusSent)
		require.Len(t, got, 1)
		exp := regexp.MustCompile(`\d+ \(\d+\)`).ReplaceAll(want[0], fmt.Appendf(nil, "2 (%d)", listRev))
		assert.Equal(t, string(exp), string(got[0]))
		// The watcher stays ended.
		got, err = w.Next(context.Background(), nil)
		require.ErrorIs(t, err, ErrStatusSent)
		assert.Empty(t, got)
		w.Stop()

		// From exactly the list's revision is fine.
		w, err = c.Watch(context.Background(), WatchOptions{ResourceVersion: listRev, RVSet: true})
		require.NoError(t, err)
		defer w.Stop()
		assert.False(t, w.Pending())
		assert.Equal(t, int64(1), c.Stats().TooOldErrors)
	})

	t.Run("older than the store's compaction", func(t *testing.T) {
		e := newEnv(t, Config{})
		a := e.create("ns", "a", nil, "")
		b := e.update("ns", "a", nil, "2")
		e.waitRev(rv(b))
		// The ring still holds both events; the store's history does not.
		require.Equal(t, 2, e.c.Stats().Replayable)
		require.NoError(t, e.s.Compact(rv(b)))
		st := e.c.Stats()
		assert.Equal(t, 2, st.HistoryLen, "the ring keeps its events")
		assert.Zero(t, st.Replayable, "but can replay none of them")
		w := e.watch(WatchOptions{ResourceVersion: rv(a), RVSet: true})
		fs, err := ending(t, w, 1)
		require.ErrorIs(t, err, ErrStatusSent)
		got := decode(t, fs)
		assert.Equal(t, fmt.Sprintf("too old resource version: %d (%d)", rv(a), rv(b)), got[0].Status.Message)
		assert.Equal(t, rv(b)+1, e.c.Stats().OldestRevision)
		// From the compacted revision itself is fine.
		w = e.watch(WatchOptions{ResourceVersion: rv(b), RVSet: true})
		c := e.create("ns", "c", nil, "")
		assert.Equal(t, c.Metadata.ResourceVersion, events(t, w, 1)[0].Object.Metadata.ResourceVersion)
	})

	t.Run("older than the ring", func(t *testing.T) {
		e := newEnv(t, Config{HistorySize: 8})
		var objs []*api.Object
		for i := range 20 {
			objs = append(objs, e.create("ns", fmt.Sprint(i), nil, ""))
		}
		e.waitRev(rv(objs[19]))
		st := e.c.Stats()
		oldest := rv(objs[12]) // the ring holds the last 8 events
		require.Equal(t, oldest, st.OldestRevision)
		require.Equal(t, 8, st.HistoryLen)
		require.Equal(t, 8, st.Replayable)

		w := e.watch(WatchOptions{ResourceVersion: oldest - 2, RVSet: true})
		fs, err := ending(t, w, 1)
		require.ErrorIs(t, err, ErrStatusSent)
		got := decode(t, fs)
		require.Equal(t, api.Error, got[0].Type)
		assert.True(t, api.IsResourceExpired(got[0].Status))
		assert.Equal(t, fmt.Sprintf("too old resource version: %d (%d)", oldest-2, oldest-1), got[0].Status.Message)

		// oldest-1 is the oldest a watch may start from: it replays all 8.
		w = e.watch(WatchOptions{ResourceVersion: oldest - 1, RVSet: true})
		got = events(t, w, 8)
		assert.Equal(t, "12", got[0].Object.Metadata.Name)
	})
}

func TestListFromTheFutureWaitsThen504(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{})
	o := e.create("ns", "a", nil, "")
	e.waitRev(rv(o))

	t.Run("never reached", func(t *testing.T) {
		start := time.Now()
		_, _, err := e.c.List(context.Background(), rv(o)+1000, nil)
		require.Error(t, err)
		assert.GreaterOrEqual(t, time.Since(start), freshnessTimeout)
		assert.True(t, api.IsTooLargeResourceVersion(err), "%v", err)
		assert.Equal(t, fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", rv(o)+1000, rv(o)), err.Error())
		after, ok := api.RetryAfterSeconds(err)
		assert.True(t, ok)
		assert.Equal(t, 1, after)

		// The shape is the recorded one.
		var recorded api.Status
		require.NoError(t, recorded.UnmarshalJSON(fixture(t, "error-504-list-future-rv.json")))
		s, _ := api.StatusOf(err)
		recorded.Message, s.Message = "", ""
		assert.Equal(t, recorded, *s)
	})

	t.Run("reached while waiting", func(t *testing.T) {
		type result struct {
			objs []*api.Object
			rev  int64
			err  error
		}
		done := make(chan result, 1)
		go func() {
			objs, rev, err := e.c.List(context.Background(), rv(o)+2, nil)
			done <- result{objs, rev, err}
		}()
		e.create("ns", "b", nil, "")
		c := e.create("ns", "c", nil, "")
		r := <-done
		require.NoError(t, r.err)
		assert.GreaterOrEqual(t, r.rev, rv(c)-0)
		assert.GreaterOrEqual(t, len(r.objs), 3)
	})

	t.Run("reached by another resource's write", func(t *testing.T) {
		// The store's revision moves with writes to other prefixes too; the
		// cache sees none of them, but a progress check lets it answer.
		other, err := e.s.Create(context.Background(), "/registry/secrets/ns/s", configMap("ns", "s", nil, ""))
		require.NoError(t, err)
		// Without the progress check the wait would end in the 504 above:
		// no error is the proof, whatever the time it took.
		objs, rev, err := e.c.List(context.Background(), rv(other), nil)
		require.NoError(t, err)
		assert.Equal(t, rv(other), rev)
		for i := 1; i < len(objs); i++ {
			assert.Less(t, objs[i-1].Key(), objs[i].Key(), "sorted by key")
		}
	})

	t.Run("ctx done while waiting", func(t *testing.T) {
		// A context that is done is what the wait finds at its first
		// select, before anything else can be ready: a timeout of a few
		// milliseconds would race the 3 s one on a stalled machine.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err := e.c.List(ctx, rv(o)+1000, nil)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestListServesFromMemorySortedAndFiltered(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{})
	for _, n := range []string{"c", "a", "b"} {
		e.create("ns1", n, map[string]string{"app": n}, "")
	}
	last := e.create("ns0", "z", nil, "")
	e.delete("ns1", "b")
	// List waits only until the cache is at minRV (last's revision), as
	// kube-apiserver 1.37.2's watch cache does (k8s.io/apiserver v0.37.2
	// pkg/storage/cacher/watch_cache.go, waitUntilFreshLocked): the
	// delete, one revision later, may not be applied yet. Wait for it.
	e.waitRev(rv(last) + 1)
	objs, rev, err := e.c.List(context.Background(), rv(last), nil)
	require.NoError(t, err)
	assert.Equal(t, rv(last)+1, rev)
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key())
	}
	assert.Equal(t, []string{"ns0/z", "ns1/a", "ns1/c"}, keys)

	objs, _, err = e.c.List(context.Background(), 0, func(o *api.Object) bool { return o.Metadata.Namespace == "ns1" })
	require.NoError(t, err)
	assert.Len(t, objs, 2)
}

func TestWatchFromAFutureRevisionWaitsForIt(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{})
	o := e.create("ns", "a", nil, "")
	e.waitRev(rv(o))
	w := e.watch(WatchOptions{ResourceVersion: rv(o) + 2, RVSet: true})
	e.create("ns", "b", nil, "")      // rv+1: before the watch's start
	e.update("ns", "a", nil, "new")   // rv+2: still not after it
	c := e.create("ns", "c", nil, "") // rv+3: the first one after
	got := events(t, w, 1)
	assert.Equal(t, api.Added, got[0].Type)
	assert.Equal(t, c.Metadata.ResourceVersion, got[0].Object.Metadata.ResourceVersion)
}

func TestInitialEvents(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{})
	b := e.create("fixtures", "beta", nil, "b")
	a := e.create("fixtures", "alpha", nil, "a")
	g := e.create("fixtures", "gamma", nil, "g")
	e.create("elsewhere", "x", nil, "")
	e.waitRev(rv(g) + 1)

	t.Run("unset and 0 send the state sorted by key", func(t *testing.T) {
		for _, opts := range []WatchOptions{
			{Namespace: "fixtures"},
			{Namespace: "fixtures", RVSet: true, ResourceVersion: 0},
		} {
			w := e.watch(opts)
			got := frames(t, w, 3)
			assert.Equal(t, string(frameOf(api.Added, a)), string(got[0]))
			assert.Equal(t, string(frameOf(api.Added, b)), string(got[1]))
			assert.Equal(t, string(frameOf(api.Added, g)), string(got[2]))
			quiet(t, w)
		}
	})

	t.Run("sendInitialEvents=false sends only changes", func(t *testing.T) {
		w := e.watch(WatchOptions{Namespace: "fixtures", SendInitialEvents: ptr(false)})
		quiet(t, w)
	})

	t.Run("sendInitialEvents=true ends with the annotated bookmark", func(t *testing.T) {
		// Another resource moves the store on: the bookmark carries the
		// store's revision, which can be above every object's, as in the
		// recording watch-sendinitialevents.jsonl. 1.37's bookmark carries
		// only the end annotation (storage.AnnotateInitialEventsEndBookmark,
		// pkg/storage/util.go; 1.32 added a list blueprint).
		other, err := e.s.Create(context.Background(), "/registry/secrets/ns/s", configMap("ns", "s", nil, ""))
		require.NoError(t, err)

		w := e.watch(WatchOptions{Namespace: "fixtures", SendInitialEvents: ptr(true), AllowBookmarks: true})
		got := frames(t, w, 4)
		assert.Equal(t, string(frameOf(api.Added, a)), string(got[0]))
		want := fmt.Sprintf(`{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":`+
			`{"resourceVersion":"%d","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", rv(other))
		assert.Equal(t, want, string(got[3]))

		// Then live events, never at or below the bookmark.
		u := e.update("fixtures", "gamma", nil, "g2")
		ev := events(t, w, 1)[0]
		assert.Equal(t, api.Modified, ev.Type)
		assert.Equal(t, u.Metadata.ResourceVersion, ev.Object.Metadata.ResourceVersion)
	})

	t.Run("sendInitialEvents=true from a future revision: in-stream 504", func(t *testing.T) {
		future := e.c.Revision() + 100
		start := time.Now()
		w := e.watch(WatchOptions{SendInitialEvents: ptr(true), AllowBookmarks: true, RVSet: true, ResourceVersion: future})
		fs, err := ending(t, w, 1)
		require.ErrorIs(t, err, ErrStatusSent)
		got := decode(t, fs)
		assert.GreaterOrEqual(t, time.Since(start), freshnessTimeout)
		require.Equal(t, api.Error, got[0].Type)
		assert.True(t, api.IsTooLargeResourceVersion(got[0].Status))
	})
}

func TestEncodeOnce(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{})
	var ws []*CacheWatcher
	for range 20 {
		ws = append(ws, e.watch(WatchOptions{SendInitialEvents: ptr(false)}))
	}
	before := e.c.Stats()
	o := e.create("ns", "a", nil, "payload")
	var first []byte
	for _, w := range ws {
		f := frames(t, w, 1)[0]
		if first == nil {
			first = f
		}
		// The very same bytes, not just equal ones.
		assert.Same(t, &first[0], &f[0])
	}
	after := e.c.Stats()
	assert.Equal(t, int64(1), after.FramesEncoded-before.FramesEncoded)
	assert.Equal(t, int64(len(frameOf(api.Added, o))), after.BytesEncoded-before.BytesEncoded)
}

func TestNamespaceScopedWatch(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{})
	w := e.watch(WatchOptions{Namespace: "a", SendInitialEvents: ptr(false)})
	all := e.watch(WatchOptions{SendInitialEvents: ptr(false)})
	e.create("b", "x", nil, "")
	o := e.create("a", "x", nil, "")
	got := events(t, w, 1)
	assert.Equal(t, o.Metadata.ResourceVersion, got[0].Object.Metadata.ResourceVersion)
	assert.Len(t, events(t, all, 2), 2)
}

func TestKillWatchers(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{})
	var ws []*CacheWatcher
	for range 3 {
		ws = append(ws, e.watch(WatchOptions{SendInitialEvents: ptr(false)}))
	}
	e.create("ns", "a", nil, "")
	require.Eventually(t, func() bool { return ws[2].Pending() }, safetyTimeout, time.Millisecond)
	assert.Equal(t, 3, e.c.KillWatchers())
	for _, w := range ws {
		got, err := w.Next(context.Background(), nil)
		assert.ErrorIs(t, err, ErrKilled)
		assert.Empty(t, got, "a killed watch delivers nothing more")
	}
	st := e.c.Stats()
	assert.Equal(t, int64(3), st.Killed)
	assert.Empty(t, st.Watchers)
	assert.Equal(t, 0, e.c.KillWatchers())
}

func TestStopEndsWatchersAndIsIdempotent(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{})
	w := e.watch(WatchOptions{})
	w2 := e.watch(WatchOptions{})
	w2.Stop()
	w2.Stop()
	_, err := w2.Next(context.Background(), nil)
	assert.ErrorIs(t, err, ErrStopped)

	e.c.Stop()
	e.c.Stop()
	_, err = w.Next(context.Background(), nil)
	assert.ErrorIs(t, err, ErrStopped)
	_, err = e.c.Watch(context.Background(), WatchOptions{})
	assert.ErrorIs(t, err, ErrStopped)
}

func TestStatsDescribeWatchers(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{WatcherBuffer: 7, HistorySize: 50})
	sel, err := api.ParseLabelSelector("app=x")
	require.NoError(t, err)
	fs, err := api.ParseFieldSelector("metadata.name=a")
	require.NoError(t, err)
	w := e.watch(WatchOptions{Namespace: "ns", Label: sel, Field: fs, Description: "kubectl/v1.32", RemoteAddr: "127.0.0.1:4242", Transport: "websocket", Request: "/api/v1/namespaces/ns/configmaps?watch=1", AllowBookmarks: true, SendInitialEvents: ptr(false)})
	o := e.create("ns", "a", map[string]string{"app": "x"}, "")
	frames(t, w, 1)
	// The dispatcher counts an event once it has handed it to every
	// watcher, so the frame can reach this watcher a moment before the
	// count moves: wait for the count, then read the rest of the snapshot.
	var st Stats
	require.Eventually(t, func() bool {
		st = e.c.Stats()
		return st.EventsDispatched == 1
	}, safetyTimeout, time.Millisecond)
	assert.Equal(t, "configmaps", st.Resource)
	assert.Equal(t, rv(o), st.Revision)
	assert.Equal(t, 1, st.HistoryLen)
	assert.Equal(t, 50, st.HistoryCap)
	require.Len(t, st.Watchers, 1)
	ws := st.Watchers[0]
	assert.Equal(t, w.ID(), ws.ID)
	assert.Equal(t, "ns", ws.Namespace)
	assert.Equal(t, "app=x", ws.Label)
	assert.Equal(t, "metadata.name=a", ws.Field)
	assert.Equal(t, "kubectl/v1.32", ws.Description)
	assert.Equal(t, "127.0.0.1:4242", ws.RemoteAddr)
	assert.Equal(t, "websocket", ws.Transport)
	assert.Equal(t, "/api/v1/namespaces/ns/configmaps?watch=1", ws.Request)
	assert.Zero(t, ws.BookmarksSent)
	assert.Equal(t, rv(o), ws.LastRevision)
	assert.Equal(t, rv(o)-1, ws.StartRevision)
	assert.True(t, ws.AllowBookmarks)
	assert.Equal(t, 7, ws.BufferCap)
	assert.Equal(t, 0, ws.Buffered)
	assert.False(t, ws.Started.IsZero())
}

func TestRelistEndsWatchersThatCannotContinue(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	// A store watch buffer of 1 makes the cache's store watch fall behind
	// under a burst: the store ends it, the cache re-lists.
	e := newEnv(t, Config{}, store.Options{WatchBuffer: 1})
	w := e.watch(WatchOptions{SendInitialEvents: ptr(false)})
	ctx := context.Background()
	require.Eventually(t, func() bool {
		for i := range 50 {
			_, _ = e.s.Create(ctx, key("ns", fmt.Sprintf("x%d-%d", time.Now().UnixNano(), i)), configMap("ns", "x", nil, ""))
		}
		return e.c.Stats().Relists > 0
	}, safetyTimeout, time.Millisecond)
	_, err := drain(w)
	assert.ErrorIs(t, err, ErrStopped)

	// The cache serves again: a new watch from now sees the next write.
	objs, rev, err := e.c.List(ctx, e.s.Revision(), nil)
	require.NoError(t, err)
	assert.NotEmpty(t, objs)
	w2 := e.watch(WatchOptions{ResourceVersion: rev, RVSet: true})
	o := e.create("ns", "final", nil, "")
	for {
		ev := events(t, w2, 1)[0]
		if ev.Object.Metadata.Name == "final" {
			assert.Equal(t, o.Metadata.ResourceVersion, ev.Object.Metadata.ResourceVersion)
			break
		}
	}
}

// drain reads w until it ends.
func drain(w *CacheWatcher) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	n := 0
	for {
		got, err := w.Next(ctx, nil)
		n += len(got)
		if err != nil {
			return n, err
		}
	}
}

func TestNextReturnsWhenCtxIsDoneEvenWithFramesPending(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{})
	w := e.watch(WatchOptions{SendInitialEvents: ptr(false)})
	e.create("ns", "a", nil, "")
	require.Eventually(t, w.Pending, safetyTimeout, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := w.Next(ctx, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, got)
}
