package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"listwatch/controllers/leaderelection"
	"listwatch/controllers/manager"
	"listwatch/workqueue"
)

// The chaos run's controller managers: two of them, each competing for
// the Lease with leader election on, as kube-controller-managers run in a
// highly available control plane. A manager that loses the Lease stops
// (kube-controller-manager exits then) and is started again, as a
// supervisor restarts the process; the run kills the leader on purpose
// (killLeader: its context ends without releasing the Lease, as kill -9
// would), and starts a replacement, so the other must wait the Lease out
// and take over.

// chaosLease is the election's timing for the run: kube-controller-
// manager's 15 s, 10 s and 2 s scaled down, so that a take-over after the
// leader is killed is a few seconds of the run, not most of it.
var chaosLease = manager.LeaderElection{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}

// candidate is one controller manager process: started again each time
// it loses the Lease, until killed.
type candidate struct {
	id     string
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	m    *manager.Manager
	runs int
}

// managers are the candidates of a run.
type managers struct {
	t    *testing.T
	ctx  context.Context
	cfg  func() manager.Config
	mu   sync.Mutex
	all  []*candidate
	next int
}

// start starts one more candidate.
func (ms *managers) start() *candidate {
	ms.mu.Lock()
	ms.next++
	id := fmt.Sprintf("chaos-manager-%d", ms.next)
	ms.mu.Unlock()
	ctx, cancel := context.WithCancel(ms.ctx)
	c := &candidate{id: id, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			cfg := ms.cfg()
			le := chaosLease
			le.Identity = id
			cfg.LeaderElection = &le
			m, err := manager.New(cfg)
			if err != nil {
				ms.t.Errorf("manager %s: %v", id, err)
				return
			}
			c.mu.Lock()
			c.m, c.runs = m, c.runs+1
			c.mu.Unlock()
			err = m.Run(ctx)
			if !errors.Is(err, leaderelection.ErrLeadershipLost) {
				return
			}
			ms.t.Logf("manager %s lost the lease: starting again", id)
		}
	}()
	ms.mu.Lock()
	ms.all = append(ms.all, c)
	ms.mu.Unlock()
	return c
}

// killLeader ends the leading candidate without releasing the Lease,
// waits for it to stop, and starts a replacement; it returns the killed
// one's identity, or "" if none led at that moment.
func (ms *managers) killLeader() string {
	ms.mu.Lock()
	var leader *candidate
	for _, c := range ms.all {
		c.mu.Lock()
		if c.m != nil && c.m.IsLeader() && leader == nil {
			select {
			case <-c.done:
			default:
				leader = c
			}
		}
		c.mu.Unlock()
	}
	ms.mu.Unlock()
	if leader == nil {
		return ""
	}
	leader.cancel()
	<-leader.done
	ms.start()
	return leader.id
}

// queues are the workqueues of every candidate's current manager: only
// the leader's ever hold work.
func (ms *managers) queues() []workqueue.Metrics {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var qs []workqueue.Metrics
	for _, c := range ms.all {
		c.mu.Lock()
		if c.m != nil {
			qs = append(qs, c.m.Queues()...)
		}
		c.mu.Unlock()
	}
	return qs
}

// stop ends every candidate and waits for them.
func (ms *managers) stop() {
	ms.mu.Lock()
	all := append([]*candidate(nil), ms.all...)
	ms.mu.Unlock()
	for _, c := range all {
		c.cancel()
		<-c.done
	}
}
