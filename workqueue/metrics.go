package workqueue

import (
	"time"

	"listwatch/internal/clock"
)

// Metrics is a snapshot of one queue's health, the numbers client-go's
// workqueue exports to Prometheus (workqueue_depth, workqueue_adds_total,
// workqueue_queue_duration_seconds, workqueue_work_duration_seconds,
// workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds,
// workqueue_retries_total). We keep them as plain numbers: no metrics
// library, and a test or a debug page reads them directly.
type Metrics struct {
	Name string
	// Depth is the number of items waiting.
	Depth int
	// Adds counts items that entered the queue (merged duplicates do not
	// count: they did not enter).
	Adds int64
	// Retries counts AddAfter and AddRateLimited calls.
	Retries int64
	// Waiting is the number of items in a delaying queue's waiting room:
	// given to AddAfter (or AddRateLimited) and not yet due. client-go
	// exports no such number; see Idle.
	Waiting int
	// QueueLatency is how long items waited between Add and Get.
	QueueLatency Summary
	// WorkDuration is how long workers held items, from Get to Done.
	WorkDuration Summary
	// InProgress is the number of items workers hold now.
	InProgress int
	// UnfinishedWork is the total time the items held now have been held:
	// it grows steadily when a worker is stuck.
	UnfinishedWork time.Duration
	// LongestRunning is how long the oldest held item has been held.
	LongestRunning time.Duration
}

// Summary aggregates observed durations.
type Summary struct {
	Count int64
	Sum   time.Duration
	Max   time.Duration
}

// Mean is Sum/Count, or 0 before any observation.
func (s Summary) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / time.Duration(s.Count)
}

func (s *Summary) observe(d time.Duration) {
	s.Count++
	s.Sum += d
	s.Max = max(s.Max, d)
}

// metrics is kept by the queue under its lock.
type metrics[T comparable] struct {
	clock clock.Clock
	depth int
	adds  int64
	// retries and waiting are written by the delaying queue, under the
	// queue's lock.
	retries      int64
	waiting      int
	latency      Summary
	work         Summary
	addTimes     map[T]time.Time
	processStart map[T]time.Time
}

func newMetrics[T comparable](c clock.Clock) *metrics[T] {
	return &metrics[T]{clock: c, addTimes: map[T]time.Time{}, processStart: map[T]time.Time{}}
}

func (m *metrics[T]) add(item T) {
	m.adds++
	if _, ok := m.addTimes[item]; !ok {
		m.addTimes[item] = m.clock.Now()
	}
}

func (m *metrics[T]) setDepth(n int) { m.depth = n }

func (m *metrics[T]) get(item T) {
	now := m.clock.Now()
	if t, ok := m.addTimes[item]; ok {
		m.latency.observe(now.Sub(t))
		delete(m.addTimes, item)
	}
	m.processStart[item] = now
}

func (m *metrics[T]) done(item T) {
	if t, ok := m.processStart[item]; ok {
		m.work.observe(m.clock.Since(t))
		delete(m.processStart, item)
	}
}

func (m *metrics[T]) snapshot(name string) Metrics {
	s := Metrics{
		Name: name, Depth: m.depth, Adds: m.adds, Retries: m.retries, Waiting: m.waiting,
		QueueLatency: m.latency, WorkDuration: m.work, InProgress: len(m.processStart),
	}
	now := m.clock.Now()
	for _, t := range m.processStart {
		d := now.Sub(t)
		s.UnfinishedWork += d
		s.LongestRunning = max(s.LongestRunning, d)
	}
	return s
}
