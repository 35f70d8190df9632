package interop_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"listwatch/internal/leakcheck"
)

// TestClientGoInformerConverges runs client-go's SharedInformerFactory
// ConfigMap informer, untuned (watch-list on, as client-go v0.37 ships),
// against our server while a few hundred random writes land across three
// namespaces. Watches are cut several times and bookmarks flow.
// Afterwards the lister and the handler's view must equal the server's
// list, and the informer must have re-listed only when the server forced a
// 410: the watch cuts must all have been resumed with a plain watch.
//
// Relists are counted on the CLIENT side by requestCounter, a wrapping
// http.RoundTripper: a LIST or a watch with sendInitialEvents=true is a
// (re)list, any other watch is a resume. 410s are counted there too, as
// HTTP status codes and as in-stream ERROR events.
func TestClientGoInformerConverges(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	// Watches without timeoutSeconds end after 1-2 s, and bookmarks flow
	// every 500 ms. client-go's reflector always asks for timeoutSeconds
	// (5-10 minutes, which a real server honours over its own default), so
	// its watches are also cut by forced connection kills during the run.
	srv := startServer(t, withWatchTimeout(time.Second), withBookmarkInterval(500*time.Millisecond), withHistory(historySize))
	w := srv.writeClient(t)
	namespaces := []string{"ns-a", "ns-b", "ns-c"}
	for _, ns := range namespaces {
		createNamespace(t, w, ns)
	}

	counter := &requestCounter{resource: "configmaps"}
	cfg := srv.restConfig()
	counter.wrap(cfg)
	r := mustClientset(t, cfg)

	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(r, 0)
	cmInformer := factory.Core().V1().ConfigMaps()
	view := newHandlerView()
	_, err := cmInformer.Informer().AddEventHandler(view)
	require.NoError(t, err)
	lister := cmInformer.Lister()
	factory.Start(ctx.Done())
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, safetyTimeout)
	defer syncCancel()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		require.True(t, ok, "%v did not sync; requests:\n%s", typ, counter)
	}
	require.Equal(t, int64(0), counter.lists.Load(), "client-go fell back from watch-list to LIST:\n%s", counter)
	require.Equal(t, int64(1), counter.watchLists.Load(), "%s", counter)

	rng := rand.New(rand.NewPCG(7, 7))
	const writes = 300
	for i := range writes {
		randomWrite(t, w, rng, namespaces, 20)
		if i%100 == 50 {
			srv.Faults().KillWatchConnections()
		}
	}
	waitConverged(t, srv, r, lister, view, counter)
	require.Equal(t, int64(1), counter.relists(), "relisted without a 410:\n%s", counter)
	require.Equal(t, int64(0), counter.gone.Load(), "%s", counter)
	require.GreaterOrEqual(t, counter.watches.Load(), int64(2), "watches should have been cut and resumed:\n%s", counter)

	// Now the server forces a 410: the informer's watch is cut while it is
	// partitioned away, and by the time it comes back the server's history
	// no longer reaches its resourceVersion.
	forceGone(t, srv, counter, w, namespaces)
	for range 50 {
		randomWrite(t, w, rng, namespaces, 20)
	}
	waitConverged(t, srv, r, lister, view, counter)
	require.Positive(t, counter.gone.Load(), "the forced 410 never reached the informer:\n%s", counter)
	assert.Equal(t, 1+counter.gone.Load(), counter.relists(),
		"every relist after the first must follow a 410:\n%s", counter)
	t.Logf("requests: lists=%d watchLists=%d watches=%d gone=%d",
		counter.lists.Load(), counter.watchLists.Load(), counter.watches.Load(), counter.gone.Load())
}

// forceGone makes the informer's next watch fail with 410, the way it
// happens in production: the client is cut off (its new requests are held
// back, a network partition) while the server kills its watch connection,
// and the world moves on by more events than the watch cache keeps
// (historySize). When the partition heals, the informer re-watches from a
// revision the server can no longer replay.
func forceGone(t *testing.T, srv *testServer, counter *requestCounter, w kubernetes.Interface, namespaces []string) {
	t.Helper()
	counter.block()
	defer counter.unblock()
	require.Positive(t, srv.Faults().KillWatchConnections())
	rng := rand.New(rand.NewPCG(1, 2))
	for range historySize + 20 {
		randomWrite(t, w, rng, namespaces, 20)
	}
}

// historySize is the watch cache history of the informer test's server.
const historySize = 100

// randomWrite creates, updates or deletes one of keys ConfigMaps in a
// random namespace.
func randomWrite(t *testing.T, w kubernetes.Interface, rng *rand.Rand, namespaces []string, keys int) {
	t.Helper()
	ctx := context.Background()
	ns := namespaces[rng.IntN(len(namespaces))]
	name := fmt.Sprintf("cm-%02d", rng.IntN(keys))
	cms := w.CoreV1().ConfigMaps(ns)
	cur, err := cms.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = cms.Create(ctx, configMap(ns, name, "0", nil), metav1.CreateOptions{})
	case err != nil:
	case rng.IntN(4) == 0:
		err = cms.Delete(ctx, name, metav1.DeleteOptions{})
	default:
		cur.Data["k"] = fmt.Sprint(rng.Int())
		_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
	}
	require.NoError(t, err)
}

// waitConverged waits until the lister and the handler view hold exactly
// the server's ConfigMaps at the same resourceVersions.
func waitConverged(t *testing.T, srv *testServer, r kubernetes.Interface, lister interface {
	List(labels.Selector) ([]*corev1.ConfigMap, error)
}, view *handlerView, counter *requestCounter) {
	t.Helper()
	var want, cached, handled map[string]string
	ok := assert.Eventually(t, func() bool {
		list, err := srv.readClient(t).CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		want = map[string]string{}
		for _, cm := range list.Items {
			want[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
		}
		objs, err := lister.List(labels.Everything())
		if err != nil {
			return false
		}
		cached = map[string]string{}
		for _, cm := range objs {
			cached[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
		}
		handled = view.snapshot()
		return equalMaps(want, cached) && equalMaps(want, handled)
	}, safetyTimeout, 50*time.Millisecond)
	if !ok {
		_, _, debug := rawGet(t, srv.url, "/debug/listwatch", nil)
		t.Logf("server debug view: %s", debug)
		require.Equal(t, want, cached, "lister vs server; requests:\n%s", counter)
		require.Equal(t, want, handled, "handler view vs server")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// handlerView is the state an event handler rebuilds from notifications
// alone: key -> resourceVersion.
type handlerView struct {
	mu sync.Mutex
	m  map[string]string
}

func newHandlerView() *handlerView { return &handlerView{m: map[string]string{}} }

func (v *handlerView) OnAdd(obj any, _ bool) {
	cm := obj.(*corev1.ConfigMap)
	v.mu.Lock()
	v.m[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	v.mu.Unlock()
}

func (v *handlerView) OnUpdate(_, obj any) { v.OnAdd(obj, false) }

func (v *handlerView) OnDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	cm := obj.(*corev1.ConfigMap)
	v.mu.Lock()
	delete(v.m, cm.Namespace+"/"+cm.Name)
	v.mu.Unlock()
}

func (v *handlerView) snapshot() map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]string, len(v.m))
	for k, rv := range v.m {
		out[k] = rv
	}
	return out
}
