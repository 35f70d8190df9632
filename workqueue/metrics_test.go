package workqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"listwatch/internal/clock"
)

func TestMetricsMeasureWaitingAndWorking(t *testing.T) {
	c := clock.NewFake(epoch)
	q := New[string](Config{Name: "pods", Clock: c})
	q.Add("a")
	q.Add("a") // merged: not an add
	q.Add("b")
	m := q.Metrics()
	assert.Equal(t, "pods", m.Name)
	assert.Equal(t, 2, m.Depth)
	assert.Equal(t, int64(2), m.Adds)

	c.Step(2 * time.Second)
	q.Get() // a waited 2 s
	c.Step(3 * time.Second)
	m = q.Metrics()
	assert.Equal(t, 1, m.Depth)
	assert.Equal(t, Summary{Count: 1, Sum: 2 * time.Second, Max: 2 * time.Second}, m.QueueLatency)
	assert.Equal(t, 1, m.InProgress)
	assert.Equal(t, 3*time.Second, m.LongestRunning, "a has been held 3 s")
	assert.Equal(t, 3*time.Second, m.UnfinishedWork)

	q.Get() // b waited 5 s
	c.Step(time.Second)
	m = q.Metrics()
	assert.Equal(t, 4*time.Second, m.LongestRunning)
	assert.Equal(t, 5*time.Second, m.UnfinishedWork, "a held 4 s plus b held 1 s")
	assert.Equal(t, 3500*time.Millisecond, m.QueueLatency.Mean())

	q.Done("a")
	q.Done("b")
	m = q.Metrics()
	assert.Equal(t, Summary{Count: 2, Sum: 5 * time.Second, Max: 4 * time.Second}, m.WorkDuration)
	assert.Zero(t, m.InProgress)
	assert.Zero(t, m.LongestRunning)
	assert.Zero(t, Summary{}.Mean())
}
