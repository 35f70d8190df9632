package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestFakeTimersFireInDeadlineOrder(t *testing.T) {
	f := NewFake(epoch)
	late := f.NewTimer(3 * time.Second)
	early := f.After(time.Second)
	require.Len(t, f.Waiters(), 2)
	assert.Equal(t, time.Second, f.Waiters()[0].Duration, "snapshot is sorted by deadline")

	f.Step(999 * time.Millisecond)
	select {
	case <-early:
		t.Fatal("fired before its deadline")
	default:
	}
	f.Step(time.Millisecond)
	assert.Equal(t, epoch.Add(time.Second), <-early)
	assert.Len(t, f.Waiters(), 1)

	f.SetTime(epoch.Add(10 * time.Second))
	assert.Equal(t, epoch.Add(10*time.Second), <-late.C())
	assert.False(t, f.HasWaiters())
	assert.Equal(t, 10*time.Second, f.Since(epoch))
}

func TestFakeTimerStopAndReset(t *testing.T) {
	f := NewFake(epoch)
	tm := f.NewTimer(time.Second)
	assert.True(t, tm.Stop())
	assert.False(t, tm.Stop(), "second Stop reports inactive")
	assert.False(t, f.HasWaiters())

	assert.False(t, tm.Reset(2*time.Second))
	w := f.Waiters()
	require.Len(t, w, 1)
	assert.Equal(t, Waiter{Kind: KindTimer, Duration: 2 * time.Second, Deadline: epoch.Add(2 * time.Second), Arming: 2}, w[0],
		"Reset arms it a second time")
	f.Step(2 * time.Second)
	<-tm.C()

	zero := f.NewTimer(0)
	<-zero.C() // a zero timer fires at once, like time.NewTimer(0)
}

func TestFakeTickerDropsTicksLikeTheRealOne(t *testing.T) {
	f := NewFake(epoch)
	tk := f.NewTicker(time.Second)
	f.Step(5 * time.Second) // one tick delivered, the rest dropped
	assert.Equal(t, epoch.Add(5*time.Second), <-tk.C())
	select {
	case <-tk.C():
		t.Fatal("ticks are dropped, not queued")
	default:
	}
	w := f.Waiters()
	require.Len(t, w, 1)
	assert.Equal(t, epoch.Add(6*time.Second), w[0].Deadline)
	tk.Stop()
	assert.False(t, f.HasWaiters())
}

func TestWaitForWaiterSynchronisesWithoutSleeping(t *testing.T) {
	f := NewFake(epoch)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-f.After(800 * time.Millisecond)
	}()
	w, err := f.WaitForWaiter(ctx, func(w Waiter) bool { return w.Kind == KindAfter })
	require.NoError(t, err)
	assert.Equal(t, 800*time.Millisecond, w.Duration)
	f.Step(w.Duration)
	<-done

	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	assert.ErrorIs(t, f.BlockUntilWaiters(short, 1), context.Canceled)
}

func TestRealClock(t *testing.T) {
	var c Clock = Real{}
	start := c.Now()
	tm := c.NewTimer(time.Millisecond)
	<-tm.C()
	assert.False(t, tm.Stop())
	<-c.After(time.Millisecond)
	tk := c.NewTicker(time.Millisecond)
	<-tk.C()
	tk.Stop()
	assert.Positive(t, c.Since(start))
}

func TestFakeAfterFuncCallsOnceDueAndCanBeReArmed(t *testing.T) {
	f := NewFake(epoch)
	called := make(chan time.Time, 2)
	tm := f.AfterFunc(time.Second, func() { called <- f.Now() })
	assert.Nil(t, tm.C(), "as time.AfterFunc's timer, it has no channel")
	require.Equal(t, []Waiter{{Kind: KindAfterFunc, Duration: time.Second, Deadline: epoch.Add(time.Second), Arming: 1}}, f.Waiters())

	// Re-armed before it is due, it waits a whole second again.
	f.Step(900 * time.Millisecond)
	assert.True(t, tm.Reset(time.Second))
	f.Step(900 * time.Millisecond)
	assert.True(t, f.HasWaiters(), "not due yet: the Reset moved it")
	f.Step(100 * time.Millisecond)
	assert.Equal(t, epoch.Add(1900*time.Millisecond), <-called)
	assert.False(t, f.HasWaiters())
	assert.False(t, tm.Stop(), "already called")

	// Stopped, it is never called: nothing waits on the clock any more.
	stopped := f.AfterFunc(time.Second, func() { called <- f.Now() })
	assert.True(t, stopped.Stop())
	assert.False(t, f.HasWaiters())
}
