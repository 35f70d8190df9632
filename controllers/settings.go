package controllers

import (
	"time"

	"listwatch/internal/clock"
	"listwatch/narrate"
	"listwatch/workqueue"
)

// DefaultWorkers is how many keys a controller reconciles at once unless
// told otherwise.
const DefaultWorkers = 2

// Settings are the options every controller shares.
type Settings struct {
	// Workers is the number of reconcile goroutines (default
	// DefaultWorkers).
	Workers int
	// Clock times backoff and delays; nil is the wall clock.
	Clock clock.Clock
	// Tracer narrates each reconcile and workqueue step; nil is silent.
	Tracer *narrate.Tracer
	// MaxRetryDelay caps the per-key backoff of failed reconciles: 0 is
	// workqueue.DefaultMaxDelay (1000 s), what Kubernetes' controllers
	// use. See RateLimiter.
	MaxRetryDelay time.Duration
}

// WithDefaults fills in what is unset.
func (s Settings) WithDefaults() Settings {
	if s.Workers <= 0 {
		s.Workers = DefaultWorkers
	}
	if s.Clock == nil {
		s.Clock = clock.Real{}
	}
	return s
}

// NewQueue returns the rate-limited workqueue a controller named name
// uses, on s's clock and tracer, with RateLimiter's limiter.
func NewQueue[T comparable](name string, s Settings) *workqueue.RateLimitingQueue[T] {
	s = s.WithDefaults()
	return workqueue.NewRateLimiting[T](workqueue.Config{Name: name, Clock: s.Clock, Tracer: s.Tracer}, RateLimiter[T](s))
}
