package chaos

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/leakcheck"
)

// The CI chaos run. The seed is random unless given:
//
//	go test -race -run TestChaos -count=1 ./chaos/ -chaos.seed=42
//
// and always logged, so a failure can be replayed with the same writes
// and the same fault schedule.
var (
	chaosSeed     = flag.Uint64("chaos.seed", 0, "seed of TestChaos (0: derived from the clock)")
	chaosDuration = flag.Duration("chaos.duration", 10*time.Second, "write phase of TestChaos")
)

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos run skipped in -short mode")
	}
	defer leakcheck.Check(t)()
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("chaos seed %d (replay: go test -race -run TestChaos -count=1 ./chaos/ -chaos.seed=%d)", seed, seed)

	// A safety bound: setup, the write phase and the convergence bound.
	ctx, cancel := context.WithTimeout(context.Background(), *chaosDuration+DefaultConvergenceTimeout+2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{
		Seed:       seed,
		Duration:   *chaosDuration,
		Writers:    4,
		Keys:       300,
		Namespaces: 3,
		Informers:  5, // every queue kind, and both watch-list and list-then-watch
		Logf:       t.Logf,
	})
	t.Logf("report:\n%s", rep)
	require.NoError(t, err, "seed %d", seed)
	assert.Empty(t, rep.Divergences, "seed %d", seed)

	// Every fault fired, and did what it is for.
	for _, k := range FaultKinds() {
		assert.Positive(t, rep.Faults[k], "fault %s never fired (seed %d)", k, seed)
	}
	// Whether a slow watcher is closed here depends on the machine: the
	// run's watches last 3-6 s and its clients give up on 2 s of silence,
	// and on a busy machine each attempt's watch can end that way before
	// the server has queued enough to close it (the fault then gives up
	// after maxSlowAttempts). TestSlowWatcherFault shows the closing with
	// nothing else ending the watch.
	assert.Positive(t, rep.WatchesKilled, "no watch was killed (seed %d)", seed)
	assert.Positive(t, rep.RefusedRequests, "no request was refused with 429/403 (seed %d)", seed)
	assert.Positive(t, rep.Expired, "no 410 Expired (seed %d)", seed)
	assert.Greater(t, rep.Reconnects, int64(len(rep.Informers)), "nobody re-watched (seed %d)", seed)
	assert.Greater(t, rep.Relists, int64(len(rep.Informers)), "nobody re-listed (seed %d)", seed)
	assert.Positive(t, rep.Events, "nothing was written (seed %d)", seed)
}

// The slow-watcher fault on its own, with watches that nothing else ends
// (no server timeout or client idle timeout within the run, no other
// fault): an informer that stops reading its watch is closed by the
// server as too slow, and the run still converges. However busy the
// machine, this only takes longer.
func TestSlowWatcherFault(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos run skipped in -short mode")
	}
	defer leakcheck.Check(t)()
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("chaos seed %d (replay: go test -race -run TestSlowWatcherFault -count=1 ./chaos/ -chaos.seed=%d)", seed, seed)
	// A safety bound only: it turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), DefaultConvergenceTimeout+5*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{
		Seed: seed, Duration: 3 * time.Second, Writers: 2, Keys: 60, Namespaces: 3, Informers: 5,
		Faults:             &FaultRates{SlowWatcher: 1},
		IdleWatchTimeout:   time.Hour,
		ServerWatchTimeout: time.Hour,
		Logf:               t.Logf,
	})
	t.Logf("report:\n%s", rep)
	require.NoError(t, err, "seed %d", seed)
	assert.Empty(t, rep.Divergences, "seed %d", seed)
	assert.Positive(t, rep.Faults[FaultSlowWatcher], "the slow-watcher fault never fired (seed %d)", seed)
	assert.Positive(t, rep.SlowWatcherClosures, "no slow watcher was closed by the server (seed %d)", seed)
}
