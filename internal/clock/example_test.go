package clock_test

import (
	"context"
	"fmt"
	"time"

	"listwatch/internal/clock"
)

// A test waits until the code under test is waiting, inspects the wait,
// and steps the clock past it: no sleeping, no guessing.
func Example() {
	c := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	done := make(chan struct{})
	go func() { // the code under test backs off for 800 ms
		<-c.After(800 * time.Millisecond)
		close(done)
	}()
	w, _ := c.WaitForWaiter(context.Background(), func(clock.Waiter) bool { return true })
	fmt.Println("someone waits", w.Duration)
	c.Step(w.Duration)
	<-done
	fmt.Println("woken at", c.Now().Format(time.TimeOnly+".000"))
	// Output:
	// someone waits 800ms
	// woken at 00:00:00.800
}
