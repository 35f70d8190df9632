//go:build slowarming

package clock

import "time"

// slowArming is built in by -tags slowarming: every timer, After, ticker
// and AfterFunc on a Fake, and every Reset or Stop, first sleeps 5 ms of
// wall time, as a goroutine preempted between reading the clock and arming
// its timer would. A test that steps a Fake before the code under test has
// armed the timer it means to fire, or that matches a timer the code is
// about to replace, then hangs or fails nearly every run instead of once
// in thousands on a busy machine:
//
//	go test -race -tags slowarming -count=2 -timeout 5m ./workqueue ./controllers/... ./informer ./reflector ./client
//
// k8s.io/utils/clock/testing's FakeClock has no such switch; it is ours,
// for auditing tests.
func slowArming() { time.Sleep(5 * time.Millisecond) }
