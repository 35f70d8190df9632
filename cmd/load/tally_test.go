package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// One event's spread is its last receive minus its first, whichever
// reader handed which over first; a write nobody received is left out.
func TestTallySpreadsEachWriteOverItsReceivers(t *testing.T) {
	tl := newTally(3)
	sent := func(i int) time.Duration { return time.Duration(i) * 10 * time.Millisecond }
	ms := time.Millisecond
	tl.add([]receipt{{0, 30 * ms}, {1, 40 * ms}}, sent)
	tl.add([]receipt{{0, 10 * ms}, {1, 50 * ms}, {0, 20 * ms}}, sent)

	assert.Equal(t, 10*ms, tl.first[0])
	assert.Equal(t, 30*ms, tl.last[0])
	assert.Equal(t, 40*ms, tl.first[1])
	assert.Equal(t, 50*ms, tl.last[1])
	// (A quantile is the upper edge of its 1 ms bucket, the max exact.)
	assert.Equal(t, "p50 11ms, p99 20ms, max 20ms (2 samples)", tl.spread(), "write 0 spread 20 ms, write 1 10 ms, write 2 none")
	assert.Equal(t, int64(5), tl.lat.n.Load())
	assert.Equal(t, 40*ms, time.Duration(tl.lat.maxNs.Load()), "write 1 sent at 10 ms, received at 50 ms")
}
