package cacher

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/leakcheck"
)

// lineWatcher is a watcher as the Turns see it: its seat, with just its
// wake-up channel.
func lineWatcher() *seat { return &seat{wake: make(chan struct{}, 1)} }

// woken reports whether w's writer was signalled, consuming the signal.
func woken(w *seat) bool {
	select {
	case <-w.wake:
		return true
	default:
		return false
	}
}

func TestTurnsLetOnlyTheLimitWriteAtOnceInOrder(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			turns := NewTurns(limit)
			ws := make([]*seat, 6)
			for i := range ws {
				ws[i] = lineWatcher()
				assert.Equal(t, i < limit, turns.ask(ws[i]), "watcher %d", i)
			}
			assert.Equal(t, TurnsStats{Limit: limit, Awake: limit, Waiting: len(ws) - limit}, turns.Stats())
			assert.True(t, turns.contended())

			// Asking again changes nothing: one place per watcher.
			assert.True(t, turns.ask(ws[0]))
			assert.False(t, turns.ask(ws[limit]))
			assert.Equal(t, len(ws)-limit, turns.Stats().Waiting)

			// Each turn given up goes to the oldest in line, and wakes it.
			for i := range ws {
				turns.pass(ws[i])
				if next := i + limit; next < len(ws) {
					assert.True(t, woken(ws[next]), "watcher %d is next", next)
					assert.True(t, turns.ask(ws[next]), "watcher %d holds its turn", next)
				}
				for j := range ws {
					assert.False(t, woken(ws[j]), "only one wakes (watcher %d)", j)
				}
			}
			assert.Equal(t, TurnsStats{Limit: limit}, turns.Stats())
			assert.False(t, turns.contended())
		})
	}
}

func TestTurnsSkipWatchersThatStepOutOrLeave(t *testing.T) {
	turns := NewTurns(1)
	a, b, c, d := lineWatcher(), lineWatcher(), lineWatcher(), lineWatcher()
	require.True(t, turns.ask(a))
	require.False(t, turns.ask(b))
	require.False(t, turns.ask(c))
	require.False(t, turns.ask(d))

	turns.stepOut(b) // its context ended; it may come back
	turns.leave(c)   // stopped for good
	assert.Equal(t, 1, turns.Stats().Waiting)

	require.False(t, turns.ask(b), "back in line, at the end")
	assert.False(t, turns.ask(c), "a watcher that left never gets in line again")

	turns.pass(a)
	assert.True(t, woken(d), "b's and c's old places are skipped")
	assert.False(t, woken(b))
	assert.False(t, woken(c))
	turns.pass(d)
	assert.True(t, woken(b))
	turns.leave(b) // leaving with the turn passes it on: nobody waits
	assert.Equal(t, TurnsStats{Limit: 1}, turns.Stats())
}

func TestTurnsExpediteAWatcherTheDispatcherWaitsFor(t *testing.T) {
	turns := NewTurns(1)
	a, b, c := lineWatcher(), lineWatcher(), lineWatcher()
	require.True(t, turns.ask(a))
	require.False(t, turns.ask(b))
	require.False(t, turns.ask(c))
	turns.expedite(c)
	turns.expedite(a) // holds a turn already: nothing to bring forward

	turns.pass(a)
	assert.True(t, woken(c), "the expedited watcher goes first")
	assert.True(t, turns.ask(c))
	turns.pass(c)
	assert.True(t, woken(b))
	assert.True(t, turns.ask(b))
	turns.pass(b)
	assert.Equal(t, TurnsStats{Limit: 1}, turns.Stats(), "c's old place was skipped")
}

func TestTurnsDefaultToHalfTheCPUsAtLeastOne(t *testing.T) {
	assert.GreaterOrEqual(t, NewTurns(0).Stats().Limit, 1)
	assert.Equal(t, NewTurns(0).Stats().Limit, NewTurns(-3).Stats().Limit)
}

// A watcher waiting in line keeps collecting frames, and takes them all in
// one Next on its turn: this is what makes a write carry many events when
// the line is long.
func TestWatcherInLineCollectsFramesForOneWrite(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	turns := NewTurns(1)
	busy := lineWatcher() // another watch's writer, holding the one turn
	require.True(t, turns.ask(busy))
	e := newEnv(t, Config{Turns: turns})
	w := e.watch(WatchOptions{SendInitialEvents: ptr(false)})

	type result struct {
		frames [][]byte
		err    error
	}
	got := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	go func() {
		fs, err := w.Next(ctx, nil)
		got <- result{fs, err}
	}()
	const n = 5
	for i := range n {
		e.create("ns", fmt.Sprintf("cm%d", i), nil, "")
	}
	// The dispatcher asked for w's turn when it queued the first frame.
	require.Eventually(t, func() bool { return turns.Stats().Waiting == 1 && w.buffered() == n },
		safetyTimeout, time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("Next returned before its turn: %d frames, %v", len(r.frames), r.err)
	default:
	}

	turns.pass(busy)
	r := <-got
	require.NoError(t, r.err)
	evs := decode(t, r.frames)
	require.Len(t, evs, n, "all the frames collected in line, in one Next")
	for i, ev := range evs {
		assert.Equal(t, fmt.Sprintf("cm%d", i), ev.Object.Metadata.Name)
	}
	assert.Equal(t, TurnsStats{Limit: 1}, turns.Stats(), "the turn was given up once the frames were taken")
}

// A Next whose context ends while in line steps out; the next Next gets
// in line again and receives the frames.
func TestNextThatGivesUpInLineCanComeBack(t *testing.T) {
	turns := NewTurns(1)
	busy := lineWatcher()
	require.True(t, turns.ask(busy))
	e := newEnv(t, Config{Turns: turns})
	w := e.watch(WatchOptions{SendInitialEvents: ptr(false)})
	e.create("ns", "cm", nil, "")
	require.Eventually(t, func() bool { return w.buffered() == 1 }, safetyTimeout, time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	fs, err := w.Next(ctx, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Empty(t, fs)
	assert.Equal(t, 0, turns.Stats().Waiting, "stepped out of line")

	turns.pass(busy)
	got := frames(t, w, 1)
	assert.Equal(t, "cm", decode(t, got)[0].Object.Metadata.Name)
}
