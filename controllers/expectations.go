package controllers

import (
	"sync"
	"time"

	"listwatch/internal/clock"
)

// ExpectationsTimeout is how long a controller trusts its expectations
// before it decides an event was lost and looks again (client-go's
// ExpectationsTimeout in pkg/controller/controller_utils.go).
const ExpectationsTimeout = 5 * time.Minute

// Expectations remember, per owner key, how many creations and deletions a
// controller has asked for and not yet seen in its informer. The cache lags
// the server: a controller that created 3 Pods and reconciles again before
// their ADDED events arrive would count 0 and create 3 more. While an
// owner's expectations are unmet its controller does not act on the count;
// each observed event lowers them. It is Kubernetes' ControllerExpectations.
type Expectations struct {
	clock clock.Clock
	mu    sync.Mutex
	m     map[string]*expectation
}

type expectation struct {
	adds, dels int
	at         time.Time
}

// NewExpectations returns empty expectations timed by c (nil: wall clock).
func NewExpectations(c clock.Clock) *Expectations {
	if c == nil {
		c = clock.Real{}
	}
	return &Expectations{clock: c, m: map[string]*expectation{}}
}

// Expect records that adds creations and dels deletions are on their way
// for key, replacing what was expected before.
func (e *Expectations) Expect(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = &expectation{adds: adds, dels: dels, at: e.clock.Now()}
}

// CreationObserved lowers key's expected creations by one: an ADDED event
// arrived, or a create failed and will never produce one.
func (e *Expectations) CreationObserved(key string) { e.lower(key, 1, 0) }

// DeletionObserved lowers key's expected deletions by one.
func (e *Expectations) DeletionObserved(key string) { e.lower(key, 0, 1) }

func (e *Expectations) lower(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		x.adds -= adds
		x.dels -= dels
	}
}

// Satisfied reports whether the controller may trust its cache for key:
// nothing is expected, everything expected was seen, or the expectations
// are older than ExpectationsTimeout.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok {
		return true
	}
	return (x.adds <= 0 && x.dels <= 0) || e.clock.Since(x.at) > ExpectationsTimeout
}

// Forget drops key's expectations (its owner is gone).
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
