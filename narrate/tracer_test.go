package narrate

import (
	"strings"
	"testing"
	"time"
)

// Two Tracers on one output share a clock with WithStart: a line printed
// later is never timed earlier, whichever Tracer prints it.
func TestWithStartSharesTheClock(t *testing.T) {
	var b strings.Builder
	start := time.Now().Add(-time.Hour)
	first := New(&b, WithStart(start))
	second := New(&b, WithStart(start))
	first.Printf(Store, "one")
	second.Printf(Store, "two")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two lines, got %q", b.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "+3600.") && !strings.HasPrefix(l, "+3601.") {
			t.Errorf("line %q is not timed from the shared start, an hour ago", l)
		}
	}
}
