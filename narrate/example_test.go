package narrate_test

import (
	"os"
	"strings"

	"listwatch/narrate"
)

func Example() {
	// Drop the timing column so the output is stable for this example, and
	// keep only the lines about one object.
	t := narrate.New(os.Stdout, narrate.WithoutTimes(), narrate.WithFilter(func(layer, line string) bool {
		return strings.Contains(line, "demo")
	}))
	t.Printf(narrate.Store, "rev 42 MODIFIED /registry/configmaps/default/demo")
	t.Printf(narrate.Store, "rev 43 ADDED /registry/configmaps/default/other")
	var off *narrate.Tracer // nil: silent
	off.Printf(narrate.Store, "never printed")
	// Output:
	// store         rev 42 MODIFIED /registry/configmaps/default/demo
}
