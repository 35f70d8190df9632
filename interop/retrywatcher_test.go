package interop_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"listwatch/internal/leakcheck"
)

// TestClientGoRetryWatcherAcrossTimeoutsAndKills runs client-go's
// RetryWatcher against a server whose watches time out every 1-2 s, kills
// its connections once on top, and checks the caller still sees every
// write exactly once, in order.
func TestClientGoRetryWatcherAcrossTimeoutsAndKills(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, withWatchTimeout(time.Second), withBookmarkInterval(500*time.Millisecond))
	w := srv.writeClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	createNamespace(t, w, "retry")

	counter := &requestCounter{resource: "configmaps"}
	cfg := srv.restConfig()
	counter.wrap(cfg)
	r := mustClientset(t, cfg)
	list, err := r.CoreV1().ConfigMaps("retry").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)

	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return r.CoreV1().ConfigMaps("retry").Watch(ctx, opts)
	}}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
	require.NoError(t, err)
	defer func() {
		rw.Stop()
		<-rw.Done()
	}()

	// One writer, so the server's order is the order written here. Writes
	// are spread over several watch timeouts: every fifth round waits until
	// the RetryWatcher has opened another watch (waiting on that, not on a
	// guessed time).
	type change struct {
		typ  watch.EventType
		name string
		rv   string
	}
	const rounds = 25
	changes := make(chan change, 3*rounds)
	writerDone := make(chan error, 1)
	go func() {
		defer close(changes)
		cms := w.CoreV1().ConfigMaps("retry")
		for i := range rounds {
			name := fmt.Sprintf("cm-%02d", i)
			cm, err := cms.Create(ctx, configMap("retry", name, "1", nil), metav1.CreateOptions{})
			if err != nil {
				writerDone <- err
				return
			}
			changes <- change{watch.Added, name, cm.ResourceVersion}
			cm.Data["k"] = "2"
			if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				writerDone <- err
				return
			}
			changes <- change{watch.Modified, name, cm.ResourceVersion}
			if i%3 == 0 {
				if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					writerDone <- err
					return
				}
				changes <- change{watch.Deleted, name, ""}
			}
			if i == rounds/2 {
				// A forced connection kill on top of the timeouts.
				srv.Faults().KillWatchConnections()
			}
			if i%5 == 4 {
				if err := waitForRewatch(ctx, counter); err != nil {
					writerDone <- err
					return
				}
			}
		}
		// A last write: the event after it must be its own, so nothing
		// (no duplicate delivered late) came in between.
		cm, err := cms.Create(ctx, configMap("retry", "last", "1", nil), metav1.CreateOptions{})
		if err != nil {
			writerDone <- err
			return
		}
		changes <- change{watch.Added, "last", cm.ResourceVersion}
		writerDone <- nil
	}()

	lastRV := mustRV(t, list.ResourceVersion)
	n := 0
	for want := range changes {
		var ev watch.Event
		select {
		case e, ok := <-rw.ResultChan():
			require.True(t, ok, "RetryWatcher stopped after %d events; requests:\n%s", n, counter)
			ev = e
		case <-time.After(safetyTimeout):
			t.Fatalf("no event within %s after %d events; requests:\n%s", safetyTimeout, n, counter)
		}
		cm, ok := ev.Object.(*corev1.ConfigMap)
		require.True(t, ok, "event %d is %s %T: %v", n, ev.Type, ev.Object, ev.Object)
		require.Equal(t, want.typ, ev.Type, "event %d (%s)", n, cm.Name)
		require.Equal(t, want.name, cm.Name, "event %d", n)
		if want.rv != "" {
			require.Equal(t, want.rv, cm.ResourceVersion, "event %d", n)
		}
		rv := mustRV(t, cm.ResourceVersion)
		require.Greater(t, rv, lastRV, "event %d: no duplicate, no going back", n)
		lastRV = rv
		n++
	}
	require.NoError(t, <-writerDone)
	assert.GreaterOrEqual(t, counter.watches.Load(), int64(4),
		"the watch should have been re-opened several times (timeouts + kill):\n%s", counter)
	t.Logf("%d events over %d watch requests", n, counter.watches.Load())
}

// waitForRewatch returns once the counted client has opened one more watch
// than when it was called, or ctx's error.
func waitForRewatch(ctx context.Context, counter *requestCounter) error {
	before := counter.watches.Load()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for counter.watches.Load() <= before {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no new watch after %d: %w", before, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
