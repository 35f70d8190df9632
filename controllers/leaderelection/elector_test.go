package leaderelection

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeServer holds one Record the way the apiserver holds a Lease: each
// write bumps its resourceVersion, and a write at an older one is 409.
type fakeServer struct {
	mu     sync.Mutex
	exists bool
	rec    Record
	rv     int
	down   bool // every request fails, as when the server is unreachable
}

func (s *fakeServer) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func (s *fakeServer) record() Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec
}

var errDown = api.NewServiceUnavailable("the server is down")

// fakeLock is one candidate's view of the fakeServer.
type fakeLock struct {
	s  *fakeServer
	id string
	rv int
}

func (l *fakeLock) Get(context.Context) (Record, []byte, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.down {
		return Record{}, nil, errDown
	}
	if !l.s.exists {
		return Record{}, nil, api.NewNotFound(Leases.GroupResource(), "test")
	}
	l.rv = l.s.rv
	return l.s.rec, l.s.rec.specJSON(), nil
}

func (l *fakeLock) Create(_ context.Context, r Record) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.down {
		return errDown
	}
	if l.s.exists {
		return api.NewAlreadyExists(Leases.GroupResource(), "test")
	}
	l.s.exists, l.s.rec = true, r
	l.s.rv++
	l.rv = l.s.rv
	return nil
}

func (l *fakeLock) Update(_ context.Context, r Record) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.down {
		return errDown
	}
	if l.rv != l.s.rv {
		return api.NewConflict(Leases.GroupResource(), "test", "the object has been modified")
	}
	l.s.rec = r
	l.s.rv++
	l.rv = l.s.rv
	return nil
}

func (l *fakeLock) Identity() string { return l.id }
func (l *fakeLock) Describe() string { return "kube-system/test" }

// candidate is one Elector running in a goroutine, with channels that say
// when it started and stopped leading.
type candidate struct {
	e       *Elector
	cancel  context.CancelFunc
	started chan struct{}
	stopped chan struct{}
	done    chan struct{} // closed when Run has returned err
	err     error
}

func startCandidate(t *testing.T, s *fakeServer, c clock.Clock, id string, release bool) *candidate {
	t.Helper()
	cd := &candidate{started: make(chan struct{}), stopped: make(chan struct{}), done: make(chan struct{})}
	e, err := New(Config{Lock: &fakeLock{s: s, id: id}, Clock: c, ReleaseOnCancel: release,
		OnStartedLeading: func(ctx context.Context) {
			close(cd.started)
			<-ctx.Done()
			close(cd.stopped)
		}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cd.e, cd.cancel = e, cancel
	go func() {
		defer close(cd.done)
		cd.err = e.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-cd.done:
		case <-time.After(2 * time.Minute): // a hang guard only
			t.Errorf("%s: Run did not return after its context ended", id)
		}
	})
	return cd
}

// stepUntil moves the fake clock to the next pending wait, again and
// again, until ch is closed; ctx only guards against a hang.
func stepUntil(ctx context.Context, t *testing.T, c *clock.Fake, ch <-chan struct{}) {
	t.Helper()
	for {
		wctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-ch:
			case <-wctx.Done():
			}
			cancel()
		}()
		w, err := c.WaitForWaiter(wctx, func(clock.Waiter) bool { return true })
		cancel()
		select {
		case <-ch:
			return
		default:
		}
		require.NoError(t, err, "nothing waits on the clock, and it did not happen")
		c.Step(w.Deadline.Sub(c.Now()))
	}
}

// waitClosed waits until ch is closed; ctx (testCtx) only turns a hang into
// a failure naming what never happened.
func waitClosed(ctx context.Context, t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("still waiting for %s: %v", what, ctx.Err())
	}
}

// testCtx guards a test against a hang only; nothing here waits on the
// wall clock.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestOneLeaderAndTheOtherTakesOverOnlyAfterTheLeaseExpires(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	ctx := testCtx(t)
	c := clock.NewFake(epoch)
	s := &fakeServer{}
	a := startCandidate(t, s, c, "a", false)
	waitClosed(ctx, t, a.started, "a to lead") // no Lease yet: created at the first try
	assert.Equal(t, "a", s.record().HolderIdentity)
	assert.Equal(t, 15, s.record().LeaseDurationSeconds, "kube-controller-manager's default")

	b := startCandidate(t, s, c, "b", false)
	// b looks, sees a's Lease, and waits to retry. Let a renew a few
	// times meanwhile: b must stay a follower.
	_, err := c.WaitFor(ctx, func(ws []clock.Waiter) bool { return len(ws) == 2 })
	require.NoError(t, err)
	for range 20 {
		w, err := c.WaitForWaiter(ctx, func(clock.Waiter) bool { return true })
		require.NoError(t, err)
		c.Step(w.Deadline.Sub(c.Now()))
		_, err = c.WaitFor(ctx, func(ws []clock.Waiter) bool { return len(ws) == 2 })
		require.NoError(t, err)
	}
	select {
	case <-b.started:
		t.Fatal("b led while a renewed its lease")
	default:
	}
	assert.True(t, a.e.IsLeader())
	assert.Equal(t, "a", b.e.Leader())

	// a dies without releasing (kill -9): its Lease stops changing.
	a.cancel()
	waitClosed(ctx, t, a.stopped, "a's OnStartedLeading to return")
	waitClosed(ctx, t, a.done, "a's Run to return")
	require.NoError(t, a.err)
	killed := c.Now()
	stepUntil(ctx, t, c, b.started)
	assert.GreaterOrEqual(t, c.Since(killed), DefaultLeaseDuration-DefaultRetryPeriod*3,
		"b waited out (most of) the lease: it counts from when it last saw the lease change")
	rec := s.record()
	assert.Equal(t, "b", rec.HolderIdentity)
	assert.Equal(t, 1, rec.LeaderTransitions)
}

func TestALeaderThatCannotRenewStepsDown(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	ctx := testCtx(t)
	c := clock.NewFake(epoch)
	s := &fakeServer{}
	a := startCandidate(t, s, c, "a", false)
	waitClosed(ctx, t, a.started, "a to lead")
	s.setDown(true)
	down := c.Now()
	stepUntil(ctx, t, c, a.stopped)
	waitClosed(ctx, t, a.done, "a's Run to return")
	assert.ErrorIs(t, a.err, ErrLeadershipLost)
	assert.GreaterOrEqual(t, c.Since(down), DefaultRenewDeadline, "it kept trying for RenewDeadline")
	assert.Less(t, c.Since(down), DefaultLeaseDuration+DefaultRetryPeriod,
		"it stepped down before another candidate could have taken over (fake time, not a wall-clock bound)")
}

func TestReleaseOnCancelLetsTheNextLeadWithoutWaiting(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	ctx := testCtx(t)
	c := clock.NewFake(epoch)
	s := &fakeServer{}
	a := startCandidate(t, s, c, "a", true)
	waitClosed(ctx, t, a.started, "a to lead")
	b := startCandidate(t, s, c, "b", false)
	_, err := c.WaitFor(ctx, func(ws []clock.Waiter) bool { return len(ws) == 2 })
	require.NoError(t, err)
	a.cancel()
	waitClosed(ctx, t, a.done, "a's Run to return")
	require.NoError(t, a.err)
	rec := s.record()
	assert.Empty(t, rec.HolderIdentity, "released")
	assert.Equal(t, 1, rec.LeaseDurationSeconds)
	released := c.Now()
	stepUntil(ctx, t, c, b.started)
	assert.Less(t, c.Since(released), DefaultLeaseDuration, "b took the released lease at its next try (fake time)")
	assert.Equal(t, "b", s.record().HolderIdentity)
}

func TestNewRefusesTimingsThatWouldLetTwoLead(t *testing.T) {
	lock := &fakeLock{s: &fakeServer{}, id: "a"}
	run := func(context.Context) {}
	_, err := New(Config{Lock: lock, OnStartedLeading: run, LeaseDuration: 5 * time.Second, RenewDeadline: 5 * time.Second})
	assert.ErrorContains(t, err, "LeaseDuration must be greater than RenewDeadline")
	_, err = New(Config{Lock: lock, OnStartedLeading: run, RenewDeadline: 2 * time.Second, RetryPeriod: 2 * time.Second})
	assert.ErrorContains(t, err, "RenewDeadline must be greater")
	_, err = New(Config{Lock: lock})
	assert.ErrorContains(t, err, "needs Lock and OnStartedLeading")
}

func TestRecordIsALeaseSpec(t *testing.T) {
	at := time.Date(2026, 11, 26, 8, 30, 0, 123456789, time.UTC)
	r := Record{HolderIdentity: "host_1234", LeaseDurationSeconds: 15, AcquireTime: at, RenewTime: at.Add(time.Second), LeaderTransitions: 3}
	raw := r.specJSON()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	assert.Equal(t, map[string]any{"holderIdentity": "host_1234", "leaseDurationSeconds": 15.0,
		"acquireTime": "2026-11-26T08:30:00.123456Z", "renewTime": "2026-11-26T08:30:01.123456Z", "leaseTransitions": 3.0}, m,
		"times are MicroTime: microseconds")
	back, err := recordFromSpec(raw)
	require.NoError(t, err)
	assert.Equal(t, at.Truncate(time.Microsecond), back.AcquireTime)
	assert.Equal(t, "host_1234", back.HolderIdentity)
	assert.Equal(t, 3, back.LeaderTransitions)
	_, err = recordFromSpec(json.RawMessage(`{"renewTime":"yesterday"}`))
	assert.Error(t, err)
	empty, err := recordFromSpec(nil)
	require.NoError(t, err)
	assert.Equal(t, Record{}, empty)
}
