package interop_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/pager"

	"listwatch/internal/leakcheck"
)

// TestPagerListsEveryObjectOnce lists a few hundred ConfigMaps through
// client-go's tools/pager with a page size of 7: limit/continue must hand
// out every object exactly once.
func TestPagerListsEveryObjectOnce(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t)
	w := srv.writeClient(t)
	ctx := context.Background()
	const n = 300
	createNamespace(t, w, "paging")
	for i := range n {
		_, err := w.CoreV1().ConfigMaps("paging").Create(ctx, configMap("paging", fmt.Sprintf("cm-%03d", i), "v", nil), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	// Another namespace's objects must not leak into the list.
	_, err := w.CoreV1().ConfigMaps("default").Create(ctx, configMap("default", "other", "v", nil), metav1.CreateOptions{})
	require.NoError(t, err)

	counter := &requestCounter{resource: "configmaps"}
	cfg := srv.restConfig()
	counter.wrap(cfg)
	r := mustClientset(t, cfg)

	p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
		return r.CoreV1().ConfigMaps("paging").List(ctx, opts)
	}))
	p.PageSize = 7
	seen := map[string]int{}
	err = p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		seen[obj.(*corev1.ConfigMap).Name]++
		return nil
	})
	require.NoError(t, err)
	require.Len(t, seen, n)
	for name, times := range seen {
		assert.Equal(t, 1, times, "%s listed %d times", name, times)
	}
	assert.Equal(t, int64((n+6)/7), counter.lists.Load(), "one LIST request per page:\n%s", counter)
}

// TestWatchFromListResourceVersion lists, then watches from the list's
// resourceVersion, and checks that exactly the following writes arrive, in
// order, with the resourceVersions the writes returned.
func TestWatchFromListResourceVersion(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t)
	w, r := srv.writeClient(t), srv.readClient(t)
	ctx := context.Background()
	cms := w.CoreV1().ConfigMaps("default")
	_, err := cms.Create(ctx, configMap("default", "before", "v", nil), metav1.CreateOptions{})
	require.NoError(t, err)

	list, err := r.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	wctx, cancel := context.WithTimeout(ctx, safetyTimeout)
	defer cancel()
	watcher, err := r.CoreV1().ConfigMaps("default").Watch(wctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	defer watcher.Stop()

	type want struct {
		typ  watch.EventType
		name string
		rv   string // "" when the write does not return one (delete)
		data string
	}
	var wants []want
	a, err := cms.Create(ctx, configMap("default", "a", "1", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	wants = append(wants, want{watch.Added, "a", a.ResourceVersion, "1"})
	a.Data["k"] = "2"
	a, err = cms.Update(ctx, a, metav1.UpdateOptions{})
	require.NoError(t, err)
	wants = append(wants, want{watch.Modified, "a", a.ResourceVersion, "2"})
	b, err := cms.Create(ctx, configMap("default", "b", "1", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	wants = append(wants, want{watch.Added, "b", b.ResourceVersion, "1"})
	require.NoError(t, cms.Delete(ctx, "a", metav1.DeleteOptions{}))
	wants = append(wants, want{watch.Deleted, "a", "", "2"})
	require.NoError(t, cms.Delete(ctx, "before", metav1.DeleteOptions{}))
	wants = append(wants, want{watch.Deleted, "before", "", "v"})
	end, err := cms.Create(ctx, configMap("default", "end", "x", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	wants = append(wants, want{watch.Added, "end", end.ResourceVersion, "x"})

	lastRV := mustRV(t, list.ResourceVersion)
	for i, wnt := range wants {
		ev := nextEvent(t, watcher)
		cm, ok := ev.Object.(*corev1.ConfigMap)
		require.True(t, ok, "event %d: object is %T (%v)", i, ev.Object, ev.Object)
		assert.Equal(t, wnt.typ, ev.Type, "event %d", i)
		assert.Equal(t, wnt.name, cm.Name, "event %d", i)
		assert.Equal(t, wnt.data, cm.Data["k"], "event %d", i)
		if wnt.rv != "" {
			assert.Equal(t, wnt.rv, cm.ResourceVersion, "event %d", i)
		}
		rv := mustRV(t, cm.ResourceVersion)
		assert.Greater(t, rv, lastRV, "event %d: resourceVersion must grow", i)
		lastRV = rv
	}
}

// TestWatchFromCompactedResourceVersion: after the server compacts its
// history, a watch from an older resourceVersion fails in a way client-go
// recognises as "expired, re-list" - either the request itself fails with
// 410 or the stream carries one ERROR event with a 410 Status.
func TestWatchFromCompactedResourceVersion(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t)
	w, r := srv.writeClient(t), srv.readClient(t)
	ctx := context.Background()
	list, err := r.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for i := range 5 {
		_, err := w.CoreV1().ConfigMaps("default").Create(ctx, configMap("default", fmt.Sprintf("c%d", i), "v", nil), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	compacted := srv.Faults().CompactNow()
	require.Greater(t, compacted, mustRV(t, list.ResourceVersion))

	wctx, cancel := context.WithTimeout(ctx, safetyTimeout)
	defer cancel()
	watcher, err := r.CoreV1().ConfigMaps("default").Watch(wctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		assert.True(t, apierrors.IsResourceExpired(err) || apierrors.IsGone(err), "watch error: %v", err)
		return
	}
	defer watcher.Stop()
	ev := nextEvent(t, watcher)
	require.Equal(t, watch.Error, ev.Type, "first event: %v", ev)
	err = apierrors.FromObject(ev.Object)
	assert.True(t, apierrors.IsResourceExpired(err) || apierrors.IsGone(err), "ERROR event: %v", err)
	// The server ends the stream after the ERROR: the channel closes.
	select {
	case ev, ok := <-watcher.ResultChan():
		assert.False(t, ok, "unexpected event after the 410: %v", ev)
	case <-time.After(safetyTimeout):
		t.Fatal("the stream did not end after the 410 ERROR event")
	}
}

// nextEvent waits (bounded) for the next event of a client-go watch.
func nextEvent(t testing.TB, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "watch channel closed early")
		return ev
	case <-time.After(safetyTimeout):
		t.Fatalf("no watch event within %s", safetyTimeout)
		return watch.Event{}
	}
}

func mustRV(t testing.TB, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	require.NoError(t, err, "resourceVersion %q", rv)
	return n
}

// TestKillDropsStalledWatch: a watch stalled by the half-open fault is
// still an open watch connection, so KillWatchConnections must drop it and
// the client must see its stream break (client-go over HTTP/1.1 has no idle
// timeout of its own: without the kill it would wait forever).
func TestKillDropsStalledWatch(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t)
	w, r := srv.writeClient(t), srv.readClient(t)
	ctx := context.Background()
	list, err := r.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, safetyTimeout)
	defer cancel()
	watcher, err := r.CoreV1().ConfigMaps("default").Watch(wctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	defer watcher.Stop()

	srv.Faults().StallWatches()
	_, err = w.CoreV1().ConfigMaps("default").Create(ctx, configMap("default", "unseen", "v", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	srv.Faults().KillWatchConnections()
	select {
	case ev, ok := <-watcher.ResultChan():
		assert.False(t, ok, "a stalled watch delivered %s after the stall", ev.Type)
	case <-time.After(safetyTimeout):
		t.Fatal("KillWatchConnections left the stalled watch connection open: the client still waits")
	}
}
