package workqueue

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/leakcheck"
	"listwatch/internal/syncbuf"
)

func TestQueueHandsItemsOutInOrderAndMergesDuplicates(t *testing.T) {
	q := New[string](Config{})
	for _, k := range []string{"a", "b", "a", "c", "b"} {
		q.Add(k)
	}
	require.Equal(t, 3, q.Len(), "a and b were waiting already: adding them again merges")
	for _, want := range []string{"a", "b", "c"} {
		got, shutdown := q.Get()
		require.False(t, shutdown)
		assert.Equal(t, want, got)
		q.Done(got)
	}
	assert.Equal(t, 0, q.Len())
}

func TestQueueNeverHandsOneItemToTwoWorkers(t *testing.T) {
	q := New[string](Config{})
	q.Add("a")
	got, _ := q.Get()
	require.Equal(t, "a", got)

	q.Add("a") // changed while the worker holds it
	assert.Equal(t, 0, q.Len(), "a is held: it must not wait where a second worker could take it")
	q.Add("b")
	other, _ := q.Get()
	assert.Equal(t, "b", other, "a second worker gets other work, never a")

	q.Done("a")
	assert.Equal(t, 1, q.Len(), "the add made while a was held is not lost: a is queued again at Done")
	again, _ := q.Get()
	assert.Equal(t, "a", again)
	q.Done("a")
	q.Done("b")
	assert.Equal(t, 0, q.Len(), "Done without a pending add does not re-queue")
}

func TestQueueAddWhileHeldIsMergedToOneRequeue(t *testing.T) {
	q := New[string](Config{})
	q.Add("a")
	q.Get()
	q.Add("a")
	q.Add("a")
	q.Done("a")
	assert.Equal(t, 1, q.Len())
}

func TestQueueDoneOfUnknownItemIsHarmless(t *testing.T) {
	q := New[string](Config{})
	q.Done("never-got")
	q.Add("a")
	q.Done("a") // Done before Get must not release a for a second worker
	assert.Equal(t, 1, q.Len())
}

func TestQueueConcurrentWorkersNeverShareAnItem(t *testing.T) {
	defer leakcheck.Check(t)()
	q := New[int](Config{})
	const items, workers, rounds = 20, 8, 200

	var holding [items]atomic.Int32
	var overlaps atomic.Int32
	var processed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				it, shutdown := q.Get()
				if shutdown {
					return
				}
				if holding[it].Add(1) != 1 {
					overlaps.Add(1)
				}
				processed.Add(1)
				holding[it].Add(-1)
				q.Done(it)
			}
		}()
	}
	var adders sync.WaitGroup
	for a := range 4 {
		adders.Add(1)
		go func() {
			defer adders.Done()
			for r := range rounds {
				q.Add((a + r) % items)
			}
		}()
	}
	adders.Wait()
	require.NoError(t, q.ShutDownWithDrain(context.Background()))
	wg.Wait()
	assert.Zero(t, overlaps.Load(), "an item was held by two workers at once")
	assert.Positive(t, processed.Load())
	assert.LessOrEqual(t, processed.Load(), int64(4*rounds), "merging means never more processing than adds")
}

func TestQueueShutDownReleasesBlockedGetAndRefusesAdds(t *testing.T) {
	defer leakcheck.Check(t)()
	q := New[string](Config{})
	res := make(chan bool)
	go func() {
		_, shutdown := q.Get()
		res <- shutdown
	}()
	q.ShutDown()
	assert.True(t, <-res, "a blocked Get returns shutdown=true")
	assert.True(t, q.ShuttingDown())
	q.Add("late")
	assert.Equal(t, 0, q.Len(), "adds after ShutDown are dropped")
}

func TestQueueShutDownStillHandsOutWaitingItems(t *testing.T) {
	q := New[string](Config{})
	q.Add("a")
	q.Add("b")
	q.ShutDown()
	for _, want := range []string{"a", "b"} {
		got, shutdown := q.Get()
		require.False(t, shutdown)
		assert.Equal(t, want, got)
		q.Done(got)
	}
	_, shutdown := q.Get()
	assert.True(t, shutdown)
}

func TestQueueShutDownWithDrainWaitsForDone(t *testing.T) {
	defer leakcheck.Check(t)()
	q := New[string](Config{})
	q.Add("a")
	item, _ := q.Get()
	drained := make(chan error, 1)
	go func() { drained <- q.ShutDownWithDrain(context.Background()) }()

	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	for !q.ShuttingDown() { // the drain has begun; wait on its first step, not on time
		select {
		case <-ctx.Done():
			t.Fatal("ShutDownWithDrain never shut the queue down")
		default:
			runtime.Gosched()
		}
	}
	select {
	case err := <-drained:
		t.Fatalf("drain returned (%v) while %q was still held", err, item)
	default:
	}
	q.Done(item)
	assert.NoError(t, <-drained)
}

func TestQueueShutDownWithDrainGivesUpWithItsContext(t *testing.T) {
	q := New[string](Config{})
	q.Add("stuck")
	q.Get() // a worker that never calls Done
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := q.ShutDownWithDrain(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestQueueNarrates(t *testing.T) {
	var out syncbuf.Buffer
	q := New[string](Config{Name: "deployments", Tracer: newTracer(&out)})
	q.Add("default/web")
	q.Add("default/web")
	q.Get()
	q.Add("default/web")
	q.Done("default/web")
	assert.Equal(t, `workqueue     deployments: add default/web (depth 1)
workqueue     deployments: add default/web: already queued, merged
workqueue     deployments: get default/web → worker (depth 0)
workqueue     deployments: add default/web while a worker holds it: queued again at Done
workqueue     deployments: done default/web, changed meanwhile: queued again (depth 1)
`, out.String())
}

func ExampleQueue() {
	q := New[string](Config{})
	q.Add("default/web")
	q.Add("default/web") // merged: still one item

	key, _ := q.Get()
	q.Add(key) // changed while we work on it: not handed to anyone else...
	fmt.Println("waiting while held:", q.Len())
	q.Done(key) // ...until we are done
	fmt.Println("waiting after Done:", q.Len())
	// Output:
	// waiting while held: 0
	// waiting after Done: 1
}
