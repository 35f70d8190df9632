package leaderelection

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/internal/clock"
	"listwatch/narrate"
)

// kube-controller-manager's defaults (component-base
// config/v1alpha1/defaults.go, RecommendedDefaultLeaderElectionConfiguration).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// jitterFactor spreads the candidates' retries: each waits between
// RetryPeriod and RetryPeriod·(1+jitterFactor) (client-go's JitterFactor).
const jitterFactor = 1.2

// Config configures an election.
type Config struct {
	// Lock is where the Record lives.
	Lock Lock
	// LeaseDuration is how long a candidate waits, from the last change of
	// the Record it saw, before it takes the Lease over; RenewDeadline is
	// how long the leader keeps trying to renew before it gives up
	// (shorter, so that it stops before anyone takes over); RetryPeriod is
	// the wait between tries. Zero values are the defaults above.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ReleaseOnCancel: when ctx ends while leading, write the Lease as
	// released (no holder, 1 s duration) so the next candidate need not
	// wait out LeaseDuration.
	ReleaseOnCancel bool
	// OnStartedLeading runs the leader's work; its context ends when
	// leadership is lost or Run's context ends. Run waits for it to return.
	OnStartedLeading func(ctx context.Context)
	// OnNewLeader, if set, is told every holder this candidate observes
	// (itself included). It must not block.
	OnNewLeader func(identity string)
	// Clock times the waits and the Lease's expiry; nil is the wall clock.
	Clock clock.Clock
	// Tracer narrates acquisitions and losses; nil is silent.
	Tracer *narrate.Tracer
}

// Elector runs one candidate's side of an election.
type Elector struct {
	cfg Config
	led atomic.Bool // OnStartedLeading was called

	mu           sync.Mutex
	observed     Record    // the Record as last read or written
	observedRaw  []byte    // ... in its raw form, to tell a change
	observedTime time.Time // when this candidate saw it change: the expiry counts from here
	reported     string    // the holder last told to OnNewLeader
}

// New checks cfg and fills in the defaults.
func New(cfg Config) (*Elector, error) {
	if cfg.Lock == nil || cfg.OnStartedLeading == nil {
		return nil, errors.New("leaderelection: Config needs Lock and OnStartedLeading")
	}
	cfg.LeaseDuration = cmpOr(cfg.LeaseDuration, DefaultLeaseDuration)
	cfg.RenewDeadline = cmpOr(cfg.RenewDeadline, DefaultRenewDeadline)
	cfg.RetryPeriod = cmpOr(cfg.RetryPeriod, DefaultRetryPeriod)
	// NewLeaderElector's checks: the leader must give up before others
	// may take over, and retry at least once before it gives up.
	if cfg.LeaseDuration <= cfg.RenewDeadline {
		return nil, errors.New("leaderelection: LeaseDuration must be greater than RenewDeadline")
	}
	if float64(cfg.RenewDeadline) <= jitterFactor*float64(cfg.RetryPeriod) {
		return nil, errors.New("leaderelection: RenewDeadline must be greater than RetryPeriod*1.2")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	return &Elector{cfg: cfg}, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Run competes for the Lease until ctx ends: it waits to acquire it, runs
// OnStartedLeading while it renews it, and when renewing fails for
// RenewDeadline it cancels OnStartedLeading's context, waits for it, and
// returns ErrLeadershipLost. It returns nil when ctx ends.
//
// client-go's LeaderElector.Run starts OnStartedLeading in a goroutine and
// does not wait for it; kube-controller-manager exits when it loses the
// Lease. Ours waits, so that a manager run in-process (a test, the chaos
// run) stops every controller before another copy starts them.
func (e *Elector) Run(ctx context.Context) error {
	if !e.acquire(ctx) {
		return nil
	}
	e.led.Store(true)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.cfg.OnStartedLeading(lctx)
	}()
	e.renew(ctx)
	cancel()
	<-done
	if ctx.Err() != nil {
		if e.cfg.ReleaseOnCancel {
			e.release()
		}
		return nil
	}
	return ErrLeadershipLost
}

// ErrLeadershipLost is Run's answer when the leader could not renew.
var ErrLeadershipLost = errors.New("leaderelection: lost the lease")

// Led reports whether this candidate ever led (OnStartedLeading was
// called).
func (e *Elector) Led() bool { return e.led.Load() }

// IsLeader reports whether this candidate holds the Lease, as far as it
// last saw.
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.observed.HolderIdentity == e.cfg.Lock.Identity()
}

// Leader is the holder this candidate last saw.
func (e *Elector) Leader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.observed.HolderIdentity
}

// acquire tries every RetryPeriod (with jitter) until it holds the Lease
// or ctx ends.
func (e *Elector) acquire(ctx context.Context) bool {
	e.cfg.Tracer.Printf(narrate.Controller, "leaderelection: %s: attempting to acquire lease %s", e.cfg.Lock.Identity(), e.cfg.Lock.Describe())
	for {
		ok := e.tryAcquireOrRenew(ctx)
		e.reportTransition()
		if ok {
			e.cfg.Tracer.Printf(narrate.Controller, "leaderelection: %s: acquired lease %s", e.cfg.Lock.Identity(), e.cfg.Lock.Describe())
			return true
		}
		jittered := e.cfg.RetryPeriod + time.Duration(rand.Float64()*jitterFactor*float64(e.cfg.RetryPeriod))
		if !e.sleep(ctx, jittered) {
			return false
		}
	}
}

// renew renews every RetryPeriod until a renewal has failed for
// RenewDeadline or ctx ends.
func (e *Elector) renew(ctx context.Context) {
	for {
		ok := e.renewWithin(ctx)
		e.reportTransition()
		if !ok {
			if ctx.Err() == nil {
				e.cfg.Tracer.Printf(narrate.Controller, "leaderelection: %s: failed to renew lease %s for %v: stepping down",
					e.cfg.Lock.Identity(), e.cfg.Lock.Describe(), e.cfg.RenewDeadline)
			}
			return
		}
		if !e.sleep(ctx, e.cfg.RetryPeriod) {
			return
		}
	}
}

// renewWithin tries to renew at once and then every RetryPeriod until it
// succeeds or RenewDeadline has passed (wait.PollUntilContextTimeout in
// client-go's renew).
func (e *Elector) renewWithin(ctx context.Context) bool {
	deadline := e.cfg.Clock.Now().Add(e.cfg.RenewDeadline)
	for {
		if e.tryAcquireOrRenew(ctx) {
			return true
		}
		if !e.sleep(ctx, e.cfg.RetryPeriod) || !e.cfg.Clock.Now().Before(deadline) {
			return false
		}
	}
}

// sleep waits d on the clock; false if ctx ended first.
func (e *Elector) sleep(ctx context.Context, d time.Duration) bool {
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// tryAcquireOrRenew is one attempt: create the Lease, renew it if ours, or
// take it over if its holder let it expire.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline) // client-go's lock client has this timeout
	defer cancel()
	now := e.cfg.Clock.Now()
	rec := Record{HolderIdentity: e.cfg.Lock.Identity(), LeaseDurationSeconds: int(e.cfg.LeaseDuration / time.Second),
		AcquireTime: now, RenewTime: now}

	// The leader's fast path: write over what it wrote last.
	if e.IsLeader() && e.leaseValid(now) {
		old := e.observedRecord()
		rec.AcquireTime, rec.LeaderTransitions = old.AcquireTime, old.LeaderTransitions
		if err := e.cfg.Lock.Update(ctx, rec); err == nil {
			e.observe(rec, nil, now)
			return true
		}
	}

	old, raw, err := e.cfg.Lock.Get(ctx)
	switch {
	case api.IsNotFound(err):
		if err := e.cfg.Lock.Create(ctx, rec); err != nil {
			return false
		}
		e.observe(rec, nil, now)
		return true
	case err != nil:
		return false
	}
	e.observeRaw(old, raw, now)
	if old.HolderIdentity != "" && e.leaseValid(now) && !e.IsLeader() {
		return false // held by another, not expired
	}
	if e.IsLeader() {
		rec.AcquireTime, rec.LeaderTransitions = old.AcquireTime, old.LeaderTransitions
	} else {
		rec.LeaderTransitions = old.LeaderTransitions + 1
	}
	if err := e.cfg.Lock.Update(ctx, rec); err != nil {
		return false // 409: someone else wrote first
	}
	e.observe(rec, nil, now)
	return true
}

// release writes the Lease as released, if this candidate holds it.
func (e *Elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.RenewDeadline) // Run's ctx has ended
	defer cancel()
	old, _, err := e.cfg.Lock.Get(ctx)
	if err != nil || !e.IsLeader() {
		return
	}
	now := e.cfg.Clock.Now()
	rec := Record{LeaderTransitions: old.LeaderTransitions, LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now}
	if err := e.cfg.Lock.Update(ctx, rec); err == nil {
		e.observe(rec, nil, now)
		e.cfg.Tracer.Printf(narrate.Controller, "leaderelection: %s: released lease %s", e.cfg.Lock.Identity(), e.cfg.Lock.Describe())
	}
}

// leaseValid: the Record last seen has not expired, counted from when this
// candidate saw it change.
func (e *Elector) leaseValid(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.observedTime.Add(time.Duration(e.observed.LeaseDurationSeconds) * time.Second).After(now)
}

func (e *Elector) observedRecord() Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.observed
}

// observe records what this candidate wrote.
func (e *Elector) observe(r Record, raw []byte, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observed, e.observedRaw, e.observedTime = r, raw, now
}

// observeRaw records what it read, restarting the expiry only if the
// Record changed since it last looked.
func (e *Elector) observeRaw(r Record, raw []byte, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if bytes.Equal(raw, e.observedRaw) {
		return
	}
	e.observed, e.observedRaw, e.observedTime = r, raw, now
}

// reportTransition tells OnNewLeader of a holder it has not been told of.
func (e *Elector) reportTransition() {
	e.mu.Lock()
	holder := e.observed.HolderIdentity
	changed := holder != e.reported
	e.reported = holder
	e.mu.Unlock()
	if changed {
		e.cfg.Tracer.Printf(narrate.Controller, "leaderelection: %s: the leader of %s is now %q", e.cfg.Lock.Identity(), e.cfg.Lock.Describe(), holder)
		if e.cfg.OnNewLeader != nil {
			e.cfg.OnNewLeader(holder)
		}
	}
}
