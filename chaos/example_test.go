package chaos_test

import (
	"context"
	"fmt"
	"time"

	"listwatch/chaos"
)

// A short run with only the connection-kill fault: a few writers, two
// informers, two seconds. Every informer converges; the counts vary with
// timing, so only the verdict is printed.
func Example() {
	rep, err := chaos.Run(context.Background(), chaos.Config{
		Seed:      42,
		Duration:  2 * time.Second,
		Writers:   2,
		Keys:      40,
		Informers: 2,
		Faults:    &chaos.FaultRates{Kill: 1},
	})
	if err != nil {
		fmt.Println("run failed:", err)
		return
	}
	fmt.Println("passed:", rep.Passed())
	fmt.Println("kills injected:", rep.Faults[chaos.FaultKill] > 0)
	// Output:
	// passed: true
	// kills injected: true
}
