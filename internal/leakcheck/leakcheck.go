// Package leakcheck lets a test prove that the code under test left no
// goroutine running once it was stopped.
package leakcheck

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// Check records the goroutines running now and, when the test ends, fails
// it if more are still running after a bounded wait (goroutines that are
// exiting need a moment to be gone, and on a busy machine a long one: the
// bound is a minute, so only a real leak fails). Call it first thing in a
// test:
//
//	defer leakcheck.Check(t)()
//
// or register it with t.Cleanup(leakcheck.Check(t)). It must not be used by
// parallel tests, whose goroutines it cannot tell apart.
func Check(t testing.TB) func() {
	t.Helper()
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(leakWait)
		for {
			now := runtime.NumGoroutine()
			if now <= before {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("leakcheck: %d goroutine(s) still running, %d before the test:\n%s",
					now, before, stacks())
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// leakWait is how long Check waits for goroutines to be gone. A passing
// test never waits that long: they go as soon as what they wait for ends.
const leakWait = time.Minute

func stacks() string {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	var keep []string
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if strings.Contains(g, "leakcheck.Check") || strings.Contains(g, "testing.tRunner") && strings.Contains(g, "testing.(*T).Run") {
			continue
		}
		keep = append(keep, g)
	}
	return strings.Join(keep, "\n\n")
}
