package fifo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
)

// TestOrderAcrossKeys is the one observable difference between the queues
// (client-go's TestDeltaFIFO_detectLineJumpers): DeltaFIFO merges foo's
// deltas and serves them where foo first queued, RealFIFO replays arrival
// order. In both, foo@14, added after the first pop, waits at the back.
func TestOrderAcrossKeys(t *testing.T) {
	want := map[string][][]string{
		"DeltaFIFO": {{"10", "11", "13"}, {"1"}, {"30"}, {"14"}},
		"RealFIFO":  {{"10"}, {"1"}, {"11"}, {"13"}, {"30"}, {"14"}},
	}
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.new(Options{})
			for _, o := range []*api.Object{obj("foo", "10"), obj("bar", "1"), obj("foo", "11"), obj("foo", "13"), obj("zab", "30")} {
				require.NoError(t, q.Add(o))
			}
			got := [][]string{rvs(pop(t, q).deltas)}
			require.NoError(t, q.Add(obj("foo", "14")))
			for _, d := range popAll(t, q) {
				got = append(got, rvs(d))
			}
			assert.Equal(t, want[k.name], got)
		})
	}
}

func TestHasSyncedTransitions(t *testing.T) {
	type step struct {
		do         func(t *testing.T, q Queue)
		wantSynced bool
	}
	add := func(name string) func(*testing.T, Queue) {
		return func(t *testing.T, q Queue) { require.NoError(t, q.Add(obj(name, "1"))) }
	}
	replace := func(objs ...*api.Object) func(*testing.T, Queue) {
		return func(t *testing.T, q Queue) { require.NoError(t, q.Replace(objs, "5")) }
	}
	popInitial := func(want bool) func(*testing.T, Queue) {
		return func(t *testing.T, q Queue) { assert.Equal(t, want, pop(t, q).initial, "isInInitialList") }
	}
	cases := []struct {
		name  string
		known KnownObjects
		steps []step
	}{
		{name: "nothing yet", steps: []step{{func(*testing.T, Queue) {}, false}}},
		{name: "Add before any Replace", steps: []step{{add("a"), true}, {popInitial(false), true}}},
		{name: "empty Replace", steps: []step{{replace(), true}}},
		{name: "Replace of two, popped one by one", steps: []step{
			{replace(obj("a", "1"), obj("b", "2")), false},
			{popInitial(true), false},
			{popInitial(true), true},
		}},
		{name: "later Adds are not initial, later Replaces do not unsync", steps: []step{
			{replace(obj("a", "1")), false},
			{add("b"), false}, // queued behind the initial list
			{popInitial(true), true},
			{popInitial(false), true},
			{replace(obj("c", "3")), true},
			{popInitial(false), true},
		}},
		{name: "tombstones count toward the initial list", known: newKnown(obj("gone", "1")), steps: []step{
			{replace(obj("a", "1")), false},
			{popInitial(true), false},
			{popInitial(true), true},
		}},
		{name: "a refused Replace does not populate", steps: []step{
			{func(t *testing.T, q Queue) { require.Error(t, q.Replace([]*api.Object{nil}, "1")) }, false},
			{replace(), true},
		}},
	}
	for _, k := range queueKinds {
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				q := k.new(Options{KnownObjects: c.known})
				for i, s := range c.steps {
					s.do(t, q)
					assert.Equal(t, s.wantSynced, q.HasSynced(), "after step %d", i)
				}
			})
		}
	}
}

// A list with one key twice is one DeltaFIFO item but two RealFIFO deltas;
// both must be popped before the queue has synced.
func TestHasSyncedCountsQueuedItems(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.new(Options{})
			require.NoError(t, q.Replace([]*api.Object{obj("a", "1"), obj("a", "2")}, "2"))
			synced := q.(interface{ Synced() <-chan struct{} }).Synced()
			for q.Len() > 0 {
				require.False(t, q.HasSynced())
				require.True(t, pop(t, q).initial)
			}
			assert.True(t, q.HasSynced())
			<-synced // closed by now
		})
	}
}

func TestPopUnblocksOnClose(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			defer leakcheck.Check(t)()
			q := k.new(Options{})
			const poppers = 5
			errs := make(chan error, poppers)
			for range poppers {
				go func() {
					errs <- q.Pop(context.Background(), func(Deltas, bool) error {
						return errors.New("nothing should be popped")
					})
				}()
			}
			q.Close()
			for range poppers {
				assert.ErrorIs(t, <-errs, ErrClosed)
			}
		})
	}
}

func TestPopUnblocksOnContextDone(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			defer leakcheck.Check(t)()
			q := k.new(Options{})
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- q.Pop(ctx, func(Deltas, bool) error { return nil }) }()
			cancel()
			assert.ErrorIs(t, <-errc, context.Canceled)

			// A done context wins even over a ready item, which stays queued.
			require.NoError(t, q.Add(obj("a", "1")))
			assert.ErrorIs(t, q.Pop(ctx, func(Deltas, bool) error { return nil }), context.Canceled)
			assert.Equal(t, 1, q.Len())
		})
	}
}

// A blocked Pop is woken by the Add it waits for.
func TestPopWakesOnAdd(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			defer leakcheck.Check(t)()
			q := k.new(Options{})
			got := make(chan Deltas, 1)
			go func() {
				_ = q.Pop(context.Background(), func(d Deltas, _ bool) error { got <- d; return nil })
			}()
			require.NoError(t, q.Add(obj("a", "7")))
			assert.Equal(t, []string{"7"}, rvs(<-got))
		})
	}
}

func TestCloseDrainsBeforeErrClosed(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.new(Options{})
			require.NoError(t, q.Add(obj("a", "1")))
			q.Close()
			assert.Equal(t, []string{"1"}, rvs(pop(t, q).deltas))
			assert.ErrorIs(t, q.Pop(context.Background(), func(Deltas, bool) error { return nil }), ErrClosed)
			assert.True(t, q.(interface{ IsClosed() bool }).IsClosed())
		})
	}
}

func TestPopReturnsProcessError(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.new(Options{})
			require.NoError(t, q.Replace([]*api.Object{obj("a", "1")}, "1"))
			boom := errors.New("boom")
			err := q.Pop(context.Background(), func(Deltas, bool) error { return boom })
			assert.ErrorIs(t, err, boom)
			// The item is gone all the same (as in client-go, which no longer
			// requeues) and counts as delivered.
			assert.Equal(t, 0, q.Len())
			assert.True(t, q.HasSynced())
		})
	}
}

func TestBadInputIsRefusedWithoutLoss(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.new(Options{})
			require.NoError(t, q.Add(obj("keep", "1")))
			for name, call := range map[string]func() error{
				"Add nil":              func() error { return q.Add(nil) },
				"Update without name":  func() error { return q.Update(obj("", "2")) },
				"Delete nil":           func() error { return q.Delete(nil) },
				"Replace with nil":     func() error { return q.Replace([]*api.Object{obj("x", "1"), nil}, "3") },
				"Replace without name": func() error { return q.Replace([]*api.Object{obj("", "1")}, "3") },
			} {
				assert.ErrorIs(t, call(), ErrNoKey, name)
			}
			// Nothing of the refused calls was queued; nothing was lost.
			assert.Equal(t, 1, q.Len())
			assert.Equal(t, []string{"1"}, rvs(pop(t, q).deltas))

			var noCtx context.Context // a caller's bug: must be an error, not a panic
			assert.Error(t, q.Pop(noCtx, func(Deltas, bool) error { return nil }))
			assert.Error(t, q.Pop(context.Background(), nil))
		})
	}
}

func TestResyncSkipsKeysWithQueuedDeltas(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			known := newKnown(obj("bar", "1"), obj("foo", "1"))
			q := k.new(Options{KnownObjects: known})
			require.NoError(t, q.Update(obj("foo", "2")))
			require.NoError(t, q.Resync())
			got := popAll(t, q)
			// foo's cached rv 1 is older than its queued rv 2: no Sync for it.
			assert.Equal(t, []Deltas{
				{{Updated, obj("foo", "2")}},
				{{Sync, obj("bar", "1")}},
			}, got)

			// Nothing queued now: both get a Sync.
			require.NoError(t, q.Resync())
			assert.Len(t, flatten(popAll(t, q)), 2)
		})
	}
}

func TestResyncWithoutKnownObjectsDoesNothing(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.new(Options{})
			require.NoError(t, q.Resync())
			assert.Equal(t, 0, q.Len())
		})
	}
}

// Several writers and one popper under -race: every delta comes out exactly
// once and, per key, in the order it was written.
func TestConcurrentWritersAndPopper(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			defer leakcheck.Check(t)()
			q := k.new(Options{})
			const writers, perWriter = 4, 300
			lastRV := map[string]int{}
			total := 0
			done := make(chan error, 1)
			go func() {
				for {
					err := q.Pop(context.Background(), func(d Deltas, _ bool) error {
						for _, x := range d {
							key, _ := KeyOf(x.Object)
							rv, _ := strconv.Atoi(resourceVersionOf(x.Object))
							if rv <= lastRV[key] {
								return fmt.Errorf("%s: rv %d after %d", key, rv, lastRV[key])
							}
							lastRV[key] = rv
							total++
						}
						return nil
					})
					if err != nil {
						done <- err
						return
					}
				}
			}()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for i := 1; i <= perWriter; i++ {
						o := obj(fmt.Sprintf("w%d-%d", w, i%7), strconv.Itoa(i))
						if i%3 == 0 {
							assert.NoError(t, q.Update(o))
						} else {
							assert.NoError(t, q.Add(o))
						}
						_ = q.Len() // readers race writers too
					}
				})
			}
			wg.Wait()
			q.Close() // the popper drains what is left, then stops
			assert.ErrorIs(t, <-done, ErrClosed)
			assert.Equal(t, writers*perWriter, total)
		})
	}
}
