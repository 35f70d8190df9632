package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// FaultKind names one of the failures the run injects.
type FaultKind int

// The faults, one per way list-watch breaks in production.
const (
	FaultWatchTimeout FaultKind = iota
	FaultKill
	FaultStall
	FaultCompact
	FaultSlowWatcher
	FaultTooManyRequests
	FaultForbidden
	FaultRequestDelay
	FaultSlowHandler
	numFaultKinds
)

var faultNames = [numFaultKinds]string{
	FaultWatchTimeout:    "watch-timeout",
	FaultKill:            "kill",
	FaultStall:           "stall",
	FaultCompact:         "compact",
	FaultSlowWatcher:     "slow-watcher",
	FaultTooManyRequests: "429",
	FaultForbidden:       "403",
	FaultRequestDelay:    "request-delay",
	FaultSlowHandler:     "slow-handler",
}

// String is the fault's name, as flags and reports spell it.
func (k FaultKind) String() string {
	if k >= 0 && k < numFaultKinds {
		return faultNames[k]
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// FaultKinds lists every fault, in a fixed order.
func FaultKinds() []FaultKind {
	out := make([]FaultKind, numFaultKinds)
	for i := range out {
		out[i] = FaultKind(i)
	}
	return out
}

// ParseFaultKind is the inverse of String.
func ParseFaultKind(s string) (FaultKind, error) {
	for k, n := range faultNames {
		if n == s {
			return FaultKind(k), nil
		}
	}
	return 0, fmt.Errorf("chaos: unknown fault %q (known: %s)", s, strings.Join(faultNames[:], ", "))
}

// injection is one scheduled fault: what, when (from the start of the
// write phase), and the parameters drawn for it.
type injection struct {
	at   time.Duration
	kind FaultKind
	// window is how long a fault that is switched on stays on (watch
	// timeout, request delay, 429/403, slow handler) or, for the slow
	// watcher, about how long one attempt can stop reading before the
	// client's idle timeout ends the watch (it only spaces slow watchers
	// apart: the fault tries again until the server closes a watcher).
	window time.Duration
	// param is the fault's own duration: the shortened watch timeout, the
	// request delay, the slow handler's delay per notification.
	param time.Duration
	// target is the informer a slow watcher or slow handler picks, as a
	// fraction in [0, 1) of the eligible informers (the run maps it).
	target float64
}

func (in injection) String() string {
	s := fmt.Sprintf("%7.3fs %s", in.at.Seconds(), in.kind)
	if in.window > 0 {
		s += fmt.Sprintf(" window=%v", in.window.Round(time.Millisecond))
	}
	if in.param > 0 {
		s += fmt.Sprintf(" param=%v", in.param.Round(time.Millisecond))
	}
	return s
}

// schedule draws the whole fault schedule of a run from its seed: for each
// fault with a positive rate, a first injection at a random point of the
// first period (or of the run, if that is shorter, so every enabled fault
// fires at least once), then one every period × U(0.5, 1.5), never before
// the previous window of the same fault has ended. It is a pure function
// of its arguments: the same seed gives the same schedule.
func schedule(seed uint64, d time.Duration, rates FaultRates, maxSlowWatcherPause time.Duration) []injection {
	var out []injection
	for _, k := range FaultKinds() {
		r := rates.rate(k)
		if r <= 0 {
			continue
		}
		// One stream per fault: changing one rate leaves the others'
		// schedules as they were.
		rng := newRand(seed, streamSchedule+uint64(k))
		period := time.Duration(float64(time.Second) / r)
		first := min(period, d)
		at := time.Duration((0.05 + 0.85*rng.Float64()) * float64(first))
		for at < d {
			in := drawInjection(rng, k, at, maxSlowWatcherPause)
			out = append(out, in)
			next := at + time.Duration((0.5+rng.Float64())*float64(period))
			at = max(next, at+in.window+100*time.Millisecond)
		}
	}
	slices.SortStableFunc(out, func(a, b injection) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return int(a.kind - b.kind)
	})
	return out
}

// drawInjection draws the parameters of one injection of kind k.
func drawInjection(rng *rand.Rand, k FaultKind, at, maxSlowWatcherPause time.Duration) injection {
	between := func(lo, hi time.Duration) time.Duration {
		return lo + time.Duration(rng.Float64()*float64(hi-lo))
	}
	in := injection{at: at, kind: k}
	switch k {
	case FaultWatchTimeout:
		in.window = between(2*time.Second, 4*time.Second)
		in.param = between(500*time.Millisecond, 1500*time.Millisecond)
	case FaultRequestDelay:
		in.window = between(time.Second, 2*time.Second)
		in.param = between(50*time.Millisecond, 300*time.Millisecond)
	case FaultTooManyRequests, FaultForbidden:
		in.window = between(500*time.Millisecond, 1500*time.Millisecond)
	case FaultSlowHandler:
		in.window = between(time.Second, 3*time.Second)
		in.param = between(time.Millisecond, 5*time.Millisecond)
		in.target = rng.Float64()
	case FaultSlowWatcher:
		in.window = maxSlowWatcherPause
		in.target = rng.Float64()
	}
	return in
}

// Random streams: each goroutine that makes random choices gets its own
// PCG stream of the run's seed, so what one does never shifts what another
// draws.
const (
	streamSchedule = 1 << 8  // + FaultKind
	streamWriter   = 1 << 16 // + writer index
)

// newRand is the PCG stream of seed for one user.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}
