package cacher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
	"listwatch/store"
)

func TestSlowWatcherIsClosedWhileOthersGetEverything(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	const buffer, total = 20, 50
	// One writer at a time: a watcher that never reads must not keep the
	// attentive one from its turns either.
	e := newEnv(t, Config{WatcherBuffer: buffer, Turns: NewTurns(1)})
	slow := e.watch(WatchOptions{SendInitialEvents: ptr(false), Description: "never reads"})
	attentive := e.watch(WatchOptions{SendInitialEvents: ptr(false)})

	// The attentive reader reports each frame; the writer stays at most half
	// a buffer ahead of it, so only the never-reading watcher can fill up.
	received := make(chan api.Event, total)
	readErr := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
		defer cancel()
		n := 0
		for n < total {
			fs, err := attentive.Next(ctx, nil)
			for _, ev := range decode(t, fs) {
				received <- ev
				n++
			}
			if err != nil {
				readErr <- err
				return
			}
		}
		readErr <- nil
	}()

	var got []api.Event
	for i := range total {
		for len(got) < i-buffer/2 {
			got = append(got, <-received)
		}
		// The store's writer never waits for the watch cache, let alone
		// for a watcher: were it to wait for the one that never reads, this
		// loop would never end (the safety timeout turns that into a
		// failure). No time is asserted.
		e.create("ns", fmt.Sprintf("cm%02d", i), nil, "")
	}
	for len(got) < total {
		got = append(got, <-received)
	}
	require.NoError(t, <-readErr)
	for i, ev := range got {
		assert.Equal(t, fmt.Sprintf("cm%02d", i), ev.Object.Metadata.Name)
	}

	// The slow watcher ended: it may still hand out what it had queued,
	// then it reports ErrTooSlow (a clean end for the HTTP layer).
	n, err := drain(slow)
	require.ErrorIs(t, err, ErrTooSlow)
	assert.LessOrEqual(t, n, buffer)
	st := e.c.Stats()
	assert.Equal(t, int64(1), st.ClosedTooSlow)
	require.Len(t, st.Watchers, 1)
	assert.Equal(t, attentive.ID(), st.Watchers[0].ID)
}

func TestTimeBudget(t *testing.T) {
	now := time.Unix(0, 0)
	b := newTimeBudget(func() time.Time { return now })
	assert.Zero(t, b.takeAvailable(), "starts empty")
	now = now.Add(time.Second)
	assert.Equal(t, budgetRefillPerSecond, b.takeAvailable())
	now = now.Add(time.Hour)
	got := b.takeAvailable()
	assert.Equal(t, budgetMax, got, "capped")
	b.returnUnused(30 * time.Millisecond)
	b.returnUnused(-time.Second)
	assert.Equal(t, 30*time.Millisecond, b.takeAvailable())
	b.returnUnused(time.Hour)
	assert.Equal(t, budgetMax, b.takeAvailable())
}

func TestSelectorTransitions(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	sel, err := api.ParseLabelSelector("app=selected")
	require.NoError(t, err)
	require.False(t, sel.Matches(map[string]string{"app": "other"}), "the selector must tell the labels apart")
	e := newEnv(t, Config{})
	w := e.watch(WatchOptions{Namespace: "fixtures", Label: sel, SendInitialEvents: ptr(false)})
	selected := map[string]string{"app": "selected"}
	other := map[string]string{"app": "other"}

	// The sequence of fixture watch-labelselector-transitions.jsonl.
	created := e.create("fixtures", "sel", selected, "1") // ADDED
	patched := e.update("fixtures", "sel", selected, "2") // MODIFIED
	e.update("fixtures", "sel", other, "3")               // DELETED (previous state)
	leftRev := e.s.Revision()                             //
	e.update("fixtures", "sel", other, "4")               // nothing
	back := e.update("fixtures", "sel", selected, "4")    // ADDED
	e.create("fixtures", "unsel", other, "x")             // nothing
	e.delete("fixtures", "sel")                           // DELETED
	delRev := e.s.Revision()                              //
	e.delete("fixtures", "unsel")                         // nothing
	e.create("fixtures", "sel2", selected, "")            // ADDED (a marker)

	got := frames(t, w, 6)
	left := *patched
	left.Metadata.ResourceVersion = strconv.FormatInt(leftRev, 10)
	gone := *back
	gone.Metadata.ResourceVersion = strconv.FormatInt(delRev, 10)
	want := [][]byte{
		frameOf(api.Added, created),
		frameOf(api.Modified, patched),
		frameOf(api.Deleted, &left), // labels and data as they were, RV of the change
		frameOf(api.Added, back),
		frameOf(api.Deleted, &gone),
	}
	for i := range want {
		assert.Equal(t, string(want[i]), string(got[i]), "frame %d", i)
	}
	assert.Contains(t, string(got[5]), `"name":"sel2"`)

	// A replay from history applies the same rules.
	r := e.watch(WatchOptions{Namespace: "fixtures", Label: sel, RVSet: true, ResourceVersion: rv(created) - 1})
	replayed := frames(t, r, 6)
	for i := range want {
		assert.Equal(t, string(want[i]), string(replayed[i]), "replayed frame %d", i)
	}
}

func TestBookmarks(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	interval := 20 * time.Millisecond
	e := newEnv(t, Config{BookmarkInterval: func() time.Duration { return interval }})
	start := e.create("ns", "a", nil, "")
	e.waitRev(rv(start))

	t.Run("only to watchers that asked, whatever their selectors", func(t *testing.T) {
		nothing, err := api.ParseLabelSelector("app=nothing")
		require.NoError(t, err)
		from := WatchOptions{RVSet: true, ResourceVersion: e.c.Revision()}
		asked := from
		asked.AllowBookmarks = true
		asked.Label = nothing
		a := e.watch(asked)
		b := e.watch(from)
		o := e.create("ns", "b", nil, "")

		// b gets the event; a's selector filters it, but not the bookmarks.
		assert.Equal(t, api.Added, events(t, b, 1)[0].Type)
		for range 3 {
			ev := events(t, a, 1)[0]
			require.Equal(t, api.Bookmark, ev.Type)
			assert.Equal(t, o.Metadata.ResourceVersion, ev.Object.Metadata.ResourceVersion)
		}
		// Three bookmark rounds went by: b, which did not ask, got none.
		assert.False(t, b.Pending())
		// The debug view counts them per watcher.
		sent := map[int64]int64{}
		for _, ws := range e.c.Stats().Watchers {
			sent[ws.ID] = ws.BookmarksSent
		}
		assert.GreaterOrEqual(t, sent[a.ID()], int64(3))
		assert.Zero(t, sent[b.ID()])

		// The bookmark is the recorded shape (watch-bookmarks-timeout5.jsonl):
		// 1.37 leaves a zero creationTimestamp out (ObjectMeta's omitzero).
		recorded := fixtureLines(t, "watch-bookmarks-timeout5.jsonl")
		prefix := `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"`
		require.True(t, bytes.HasPrefix(recorded[1], []byte(prefix)), "%s", recorded[1])
		want := prefix + o.Metadata.ResourceVersion + `"}}}` + "\n"
		assert.Equal(t, want, string(*e.c.bookmarkFrame(rv(o))))
	})

	t.Run("none until the cache moves past the start", func(t *testing.T) {
		busy := e.watch(WatchOptions{AllowBookmarks: true, RVSet: true, ResourceVersion: e.c.Revision()})
		o := e.create("ns", "c", nil, "")
		e.waitRev(rv(o))
		quietOne := e.watch(WatchOptions{AllowBookmarks: true, RVSet: true, ResourceVersion: rv(o)})
		require.Equal(t, api.Added, events(t, busy, 1)[0].Type)
		for range 3 {
			require.Equal(t, api.Bookmark, events(t, busy, 1)[0].Type)
		}
		assert.False(t, quietOne.Pending())
	})

	t.Run("resuming from a bookmark loses nothing", func(t *testing.T) {
		a := e.watch(WatchOptions{AllowBookmarks: true, RVSet: true, ResourceVersion: e.c.Revision() - 1})
		e.create("ns", "d", nil, "")
		var mark api.Event
		for mark.Type != api.Bookmark {
			mark = events(t, a, 1)[0]
		}
		a.Stop()
		var want []string
		for i := range 5 {
			o := e.create("ns", fmt.Sprintf("after%d", i), nil, "")
			want = append(want, o.Metadata.ResourceVersion)
		}
		resumed := e.watch(WatchOptions{RVSet: true, ResourceVersion: rv(mark.Object)})
		var got []string
		for _, ev := range events(t, resumed, 5) {
			got = append(got, ev.Object.Metadata.ResourceVersion)
		}
		assert.Equal(t, want, got)
	})
}

func TestBookmarkBeforeTheDeadline(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	// The periodic interval is an hour: only the pre-deadline bookmark can
	// come, so its arrival is the proof it was sent for the deadline. When
	// it arrives is checked from below only: a busy machine may deliver it
	// late, and that is no fault of the cache (nextBookmarkTime's own test
	// checks the time it is due).
	e := newEnv(t, Config{BookmarkInterval: func() time.Duration { return time.Hour }})
	deadline := time.Now().Add(bookmarkLead + 600*time.Millisecond)
	w := e.watch(WatchOptions{AllowBookmarks: true, SendInitialEvents: ptr(false), Deadline: deadline})
	o := e.create("ns", "a", nil, "")
	assert.Equal(t, api.Added, events(t, w, 1)[0].Type)
	ev := events(t, w, 1)[0]
	now := time.Now()
	require.Equal(t, api.Bookmark, ev.Type)
	assert.Equal(t, o.Metadata.ResourceVersion, ev.Object.Metadata.ResourceVersion)
	assert.False(t, now.Before(deadline.Add(-bookmarkLead)), "bookmark %v too early", deadline.Add(-bookmarkLead).Sub(now))
}

func TestNextBookmarkTime(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		name     string
		deadline time.Time
		want     time.Time
	}{
		{"no deadline", time.Time{}, now.Add(time.Minute)},
		{"far deadline", now.Add(time.Hour), now.Add(time.Minute)},
		{"near deadline", now.Add(10 * time.Second), now.Add(8 * time.Second)},
		{"pre-deadline time passed", now.Add(time.Second), time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, nextBookmarkTime(now, time.Minute, tc.deadline))
		})
	}
}

// TestNoWatcherSeesARevisionGoBackwards runs random writes against many
// watchers of every kind and checks, for each, that revisions only go
// forward (per key for the synthetic initial events, globally otherwise)
// and that the state it rebuilds equals the store's.
func TestNoWatcherSeesARevisionGoBackwards(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{HistorySize: 300, WatcherBuffer: 1000,
		BookmarkInterval: func() time.Duration { return 10 * time.Millisecond }})
	labelA, err := api.ParseLabelSelector("app=a")
	require.NoError(t, err)
	selectorsWork := !labelA.Matches(map[string]string{"app": "b"})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var writers sync.WaitGroup
	writing := make(chan struct{})
	for wr := range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			rng := rand.New(rand.NewPCG(uint64(wr), 42))
			for range 150 {
				ns := []string{"ns1", "ns2"}[rng.IntN(2)]
				name := fmt.Sprintf("k%d", rng.IntN(10))
				labels := map[string]string{"app": []string{"a", "b"}[rng.IntN(2)]}
				k := key(ns, name)
				switch rng.IntN(3) {
				case 0:
					_, _ = e.s.Create(ctx, k, configMap(ns, name, labels, strconv.Itoa(rng.IntN(100))))
				case 1:
					_, _ = e.s.Update(ctx, k, configMap(ns, name, labels, strconv.Itoa(rng.IntN(100))), store.Preconditions{})
				case 2:
					_, _ = e.s.Delete(ctx, k, store.Preconditions{})
				}
			}
		}()
	}

	type result struct {
		name  string
		state map[string]string // key -> resourceVersion
		// whole: the watch started with the whole state (synthetic
		// events), so state can be compared with the store's.
		whole bool
		last  int64
		err   error
		opts  WatchOptions
	}
	results := make(chan result, 64)
	var watchers sync.WaitGroup
	startWatcher := func(name string, opts WatchOptions) {
		opts.AllowBookmarks = true
		w, err := e.c.Watch(ctx, opts)
		require.NoError(t, err)
		watchers.Add(1)
		go func() {
			defer watchers.Done()
			defer w.Stop()
			res := result{name: name, state: map[string]string{}, opts: opts}
			// Synthetic initial events come first, sorted by key, each at
			// or below the revision the watch started from (so revisions
			// may go down from one key to the next); everything after goes
			// strictly up (a bookmark may repeat the last revision).
			inInitial := !opts.RVSet || opts.ResourceVersion == 0
			if opts.SendInitialEvents != nil && !*opts.SendInitialEvents {
				inInitial = false
			}
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				inInitial = true
			}
			res.whole = inInitial
			seen := map[string]bool{}
			last := w.startRev
			if !inInitial && opts.RVSet {
				last = opts.ResourceVersion
			}
			for {
				fs, err := w.Next(ctx, nil)
				for _, ev := range decode(t, fs) {
					if ev.Type == api.Error {
						res.err = ev.Status
						results <- res
						return
					}
					r := rv(ev.Object)
					k := ev.Object.Key()
					switch {
					case inInitial && ev.Type == api.Added && r <= w.startRev:
						if seen[k] {
							res.err = fmt.Errorf("%s: two initial events for %s", name, k)
						}
						seen[k] = true
					case ev.Type == api.Bookmark:
						inInitial = false
						if r < last {
							res.err = fmt.Errorf("%s: BOOKMARK rev %d after rev %d", name, r, last)
						}
						last = r
					default:
						inInitial = false
						if r <= last {
							res.err = fmt.Errorf("%s: %s rev %d after rev %d", name, ev.Type, r, last)
						}
						last = r
					}
					switch ev.Type {
					case api.Added, api.Modified:
						res.state[k] = ev.Object.Metadata.ResourceVersion
					case api.Deleted:
						delete(res.state, k)
					}
					res.last = max(res.last, r)
				}
				if err != nil || res.err != nil {
					// Cancelling ctx ends the watch: Next reports either.
					if res.err == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrStopped) {
						res.err = err
					}
					results <- res
					return
				}
			}
		}()
	}

	go func() { writers.Wait(); close(writing) }()
	rng := rand.New(rand.NewPCG(7, 7))
	n := 0
	base := e.c.Revision()
	for len(results) == 0 && n < 24 {
		// Start the watchers while the writers run: one every ~20 writes.
	wait:
		for e.c.Revision() < base+int64(10*n) {
			select {
			case <-writing:
				break wait
			case <-time.After(100 * time.Microsecond):
			}
		}
		cur := e.c.Revision()
		var opts WatchOptions
		switch n % 6 {
		case 0:
		case 1:
			opts = WatchOptions{Namespace: "ns1", RVSet: true}
		case 2:
			opts = WatchOptions{RVSet: true, ResourceVersion: max(1, cur-int64(rng.IntN(100)))}
		case 3:
			opts = WatchOptions{SendInitialEvents: ptr(true)}
		case 4:
			opts = WatchOptions{SendInitialEvents: ptr(false), Namespace: "ns2"}
		case 5:
			if selectorsWork {
				opts = WatchOptions{Label: labelA}
			}
		}
		startWatcher(fmt.Sprintf("w%d", n), opts)
		n++
	}
	writers.Wait()
	// One last write moves the cache past every watch's start, so every
	// watcher gets a bookmark at (or the event of) the final revision.
	final := rv(e.create("ns1", "last", map[string]string{"app": "b"}, ""))

	// Every watcher ends up at the final revision (through events or
	// bookmarks); then its state must be the store's, filtered alike.
	all, err := e.s.List(ctx, testPrefix, store.ListOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return e.c.Revision() >= final }, safetyTimeout, time.Millisecond)
	require.Eventually(t, func() bool {
		for _, st := range e.c.Stats().Watchers {
			if st.LastRevision < final {
				return false
			}
		}
		return true
	}, safetyTimeout, time.Millisecond, "every watcher reaches the final revision")
	cancel()
	watchers.Wait()
	close(results)
	complete := 0
	for res := range results {
		if api.IsResourceExpired(res.err) {
			continue // started from a revision the ring had dropped: fine
		}
		require.NoError(t, res.err, res.name)
		require.Equal(t, final, res.last, res.name)
		if !res.whole {
			continue // started from a revision: it never had the whole state
		}
		complete++
		want := map[string]string{}
		probe := &CacheWatcher{opts: res.opts}
		for _, o := range all.Items {
			if probe.matches(o) {
				want[o.Key()] = o.Metadata.ResourceVersion
			}
		}
		assert.Equal(t, want, res.state, res.name)
	}
	t.Logf("%d watchers, %d compared, final rev %d", n, complete, final)
	assert.Greater(t, complete, n/2)
}
