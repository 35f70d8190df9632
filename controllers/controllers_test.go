package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
	"listwatch/workqueue"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestOwnerReferencesRoundTripAndKeepOtherMetadata(t *testing.T) {
	owner := &api.Object{APIVersion: "apps/v1", Kind: "Deployment", Metadata: api.ObjectMeta{Namespace: "default", Name: "web", UID: "u-1"}}
	pod := &api.Object{APIVersion: "v1", Kind: "Pod", Metadata: api.ObjectMeta{Namespace: "default", Name: "web-1",
		Extra: []api.Field{{Name: "finalizers", Value: []byte(`["x"]`)}}}}

	refs, err := OwnerReferences(pod)
	require.NoError(t, err)
	assert.Empty(t, refs)
	_, ok := ControllerOf(pod)
	assert.False(t, ok)

	require.NoError(t, SetOwnerReferences(pod, []OwnerReference{ControllerRef(owner)}))
	raw, err := pod.MarshalJSON()
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"u-1","controller":true,"blockOwnerDeletion":true}]`)
	assert.Contains(t, string(raw), `"finalizers":["x"]`, "other metadata is kept")

	var back api.Object
	require.NoError(t, back.UnmarshalJSON(raw))
	ref, ok := ControllerOf(&back)
	require.True(t, ok)
	assert.Equal(t, "u-1", ref.UID)
	key, ok := OwnerKey(&back, "apps/v1", "Deployment")
	assert.True(t, ok)
	assert.Equal(t, "default/web", key)
	_, ok = OwnerKey(&back, "apps/v1", "StatefulSet")
	assert.False(t, ok, "an owner of another kind is not this controller's")

	require.NoError(t, SetOwnerReferences(&back, nil))
	refs, err = OwnerReferences(&back)
	require.NoError(t, err)
	assert.Empty(t, refs)
	assert.Len(t, back.Metadata.Extra, 1, "only finalizers remain")
}

func TestOwnerReferencesMalformedIsAnError(t *testing.T) {
	pod := &api.Object{Metadata: api.ObjectMeta{Name: "p", Extra: []api.Field{{Name: "ownerReferences", Value: []byte(`{"not":"a list"}`)}}}}
	_, err := OwnerReferences(pod)
	assert.ErrorContains(t, err, "ownerReferences of p")
	_, ok := ControllerOf(pod)
	assert.False(t, ok)
}

func TestExpectations(t *testing.T) {
	c := clock.NewFake(epoch)
	e := NewExpectations(c)
	assert.True(t, e.Satisfied("web"), "nothing expected")

	e.Expect("web", 2, 0)
	assert.False(t, e.Satisfied("web"))
	e.CreationObserved("web")
	assert.False(t, e.Satisfied("web"))
	e.CreationObserved("web")
	assert.True(t, e.Satisfied("web"), "both creations seen")

	e.Expect("web", 0, 1)
	assert.False(t, e.Satisfied("web"))
	e.DeletionObserved("web")
	assert.True(t, e.Satisfied("web"))

	e.Expect("db", 5, 0)
	c.Step(ExpectationsTimeout + time.Second)
	assert.True(t, e.Satisfied("db"), "expectations expire: a lost event cannot wedge a controller")
	e.Forget("db")
	e.CreationObserved("db") // for a forgotten key: harmless
	assert.True(t, e.Satisfied("db"))
}

func TestRunWorkersRetriesWithBackoffAndForgetsOnSuccess(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	c := clock.NewFake(epoch)
	q := workqueue.NewRateLimiting[string](workqueue.Config{Clock: c}, nil)
	var mu sync.Mutex
	attempts := map[string]int{}
	succeeded := make(chan string, 10)
	reconcile := func(_ context.Context, key string) error {
		mu.Lock()
		defer mu.Unlock()
		attempts[key]++
		if key == "flaky" && attempts[key] < 3 {
			return errors.New("conflict")
		}
		succeeded <- key
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { RunWorkers(ctx, "test", q, 2, reconcile, nil); close(done) }()

	// safety only turns a hang into a failure (see receive).
	safety, cancelSafety := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancelSafety()
	q.Add("ok")
	q.Add("flaky")
	assert.Equal(t, "ok", receive(safety, t, succeeded, "ok to succeed"))
	for _, wait := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond} {
		// The retry's own timer: stepping before it is armed would arm it
		// from the new time, a whole backoff away, and nothing would retry.
		_, err := c.WaitForWaiter(safety, func(w clock.Waiter) bool { return w.Kind == clock.KindTimer && w.Duration == wait })
		require.NoError(t, err, "retry %v; the clock's waiters: %v", wait, c.Waiters())
		c.Step(wait)
	}
	assert.Equal(t, "flaky", receive(safety, t, succeeded, "flaky to succeed at its third attempt"))
	require.Eventually(t, func() bool { return q.NumRequeues("flaky") == 0 }, 2*time.Minute, time.Millisecond,
		"success forgets the failures")
	cancel()
	receive(safety, t, done, "RunWorkers to return after its context ended")
	assert.True(t, q.ShuttingDown(), "RunWorkers shuts its queue down")
}

// receive takes one value from ch, failing the test when ctx (a generous
// safety timeout, no bound on speed) ends first, so a bug fails the test
// with a message instead of hanging the package until go test's timeout.
func receive[T any](ctx context.Context, t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("still waiting for %s: %v", what, ctx.Err())
		var zero T
		return zero
	}
}

// A controller's whole shape: a handler queues keys, workers reconcile
// them from the cache, expectations cover the cache's lag.
func ExampleExpectations() {
	e := NewExpectations(nil)
	e.Expect("default/web", 3, 0) // we just created 3 Pods
	fmt.Println("act on the cache now?", e.Satisfied("default/web"))
	for range 3 {
		e.CreationObserved("default/web") // their ADDED events arrive
	}
	fmt.Println("and now?", e.Satisfied("default/web"))
	// Output:
	// act on the cache now? false
	// and now? true
}

func TestRateLimiterCapsThePerKeyBackoffWhenAsked(t *testing.T) {
	c := clock.NewFake(epoch)
	def := RateLimiter[string](Settings{Clock: c})
	capped := RateLimiter[string](Settings{Clock: c, MaxRetryDelay: 2 * time.Second})
	var d, cd time.Duration
	for range 30 { // far past both caps; the bucket's 100 tokens are not used up
		d, cd = def.When("a"), capped.When("a")
	}
	assert.Equal(t, workqueue.DefaultMaxDelay, d, "Kubernetes' default: 1000 s")
	assert.Equal(t, 2*time.Second, cd)
	capped.Forget("a")
	assert.Equal(t, workqueue.DefaultBaseDelay, capped.When("a"), "forgotten: back to 5 ms")
}
