package interop_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"listwatch/internal/leakcheck"
)

// contentTypes records the Content-Type of every request body and
// response, to prove the default clientset really spoke protobuf.
type contentTypes struct {
	rt       http.RoundTripper
	mu       sync.Mutex
	sent     map[string]int
	received map[string]int
}

func (c *contentTypes) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ct := r.Header.Get("Content-Type"); ct != "" {
		c.sent[r.Method+" "+ct]++
	}
	if err == nil {
		c.received[resp.Header.Get("Content-Type")]++
	}
	return resp, err
}

func (c *contentTypes) counts() (sent, received map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps(c.sent), maps(c.received)
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// defaultClient is a clientset with client-go's DEFAULT content config
// (protobuf preferred, protobuf bodies) that records the content types.
func (s *testServer) defaultClient(t testing.TB) (kubernetes.Interface, *contentTypes) {
	t.Helper()
	ct := &contentTypes{sent: map[string]int{}, received: map[string]int{}}
	cfg := s.restConfig()
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { ct.rt = rt; return ct }
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs, ct
}

// typedClient is the method set every typed client of client-go shares.
type typedClient[T runtime.Object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// crud drives one typed client through create, get, update, list, watch
// and delete; newObj builds an object of the kind with the given name.
func crud[T runtime.Object, L runtime.Object](t *testing.T, c typedClient[T, L], newObj func(name string) T) {
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	created, err := c.Create(ctx, newObj("one"), metav1.CreateOptions{})
	require.NoError(t, err)
	acc, err := meta.Accessor(created)
	require.NoError(t, err)
	assert.Equal(t, "one", acc.GetName())
	assert.NotEmpty(t, acc.GetResourceVersion())
	assert.NotEmpty(t, acc.GetUID())
	ts := acc.GetCreationTimestamp()
	assert.False(t, ts.IsZero(), "creationTimestamp came back through protobuf")

	got, err := c.Get(ctx, "one", metav1.GetOptions{})
	require.NoError(t, err)
	gacc, _ := meta.Accessor(got)
	gacc.SetLabels(map[string]string{"updated": "yes"})
	updated, err := c.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	uacc, _ := meta.Accessor(updated)
	assert.Equal(t, map[string]string{"updated": "yes"}, uacc.GetLabels())
	assert.NotEqual(t, acc.GetResourceVersion(), uacc.GetResourceVersion())

	list, err := c.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	items, err := meta.ExtractList(list)
	require.NoError(t, err)
	require.Len(t, items, 1)
	lacc, _ := meta.ListAccessor(list)

	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: lacc.GetResourceVersion()})
	require.NoError(t, err)
	defer w.Stop()
	_, err = c.Create(ctx, newObj("two"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, c.Delete(ctx, "two", metav1.DeleteOptions{}))
	next := func() (watch.Event, metav1.Object) {
		t.Helper()
		select {
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "watch closed early")
			eacc, err := meta.Accessor(ev.Object)
			require.NoError(t, err, "%+v", ev.Object)
			assert.Equal(t, "two", eacc.GetName())
			return ev, eacc
		case <-ctx.Done():
			t.Fatal("no event")
			return watch.Event{}, nil
		}
	}
	ev, _ := next()
	require.Equal(t, watch.Added, ev.Type, "%+v", ev.Object)
	ev, eacc := next()
	if ev.Type == watch.Modified && eacc.GetDeletionTimestamp() != nil {
		ev, _ = next() // a Pod is deleted gracefully: MODIFIED with deletionTimestamp first
	}
	require.Equal(t, watch.Deleted, ev.Type, "%+v", ev.Object)

	require.NoError(t, c.Delete(ctx, "one", metav1.DeleteOptions{}))
	_, err = c.Get(ctx, "one", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "get after delete: %v", err)
}

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}}}}
}

func newService(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80}}}}
}

func newDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	replicas := int32(2)
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}}}}
}

func newSecret(name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"k": {0, 1, 0xff}}}
}

func newConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"},
		BinaryData: map[string][]byte{"b": {0xff}}}
}

// TestDefaultContentConfigCRUD: a clientset exactly as client-go makes it
// by default (protobuf preferred for reads, protobuf bodies for writes,
// protobuf DeleteOptions on every Delete) does CRUD, list and watch on
// Pods, Services, Deployments, Secrets and ConfigMaps - and protobuf is
// what went over the wire both ways.
func TestDefaultContentConfigCRUD(t *testing.T) {
	t.Cleanup(leakcheck.Check(t)) // registered first, so it runs after the server stops
	srv := startServer(t)
	cs, ct := srv.defaultClient(t)
	const ns = "default"
	t.Run("pods", func(t *testing.T) { crud(t, cs.CoreV1().Pods(ns), newPod) })
	t.Run("services", func(t *testing.T) { crud(t, cs.CoreV1().Services(ns), newService) })
	t.Run("deployments", func(t *testing.T) { crud(t, cs.AppsV1().Deployments(ns), newDeployment) })
	t.Run("secrets", func(t *testing.T) { crud(t, cs.CoreV1().Secrets(ns), newSecret) })
	t.Run("configmaps", func(t *testing.T) { crud(t, cs.CoreV1().ConfigMaps(ns), newConfigMap) })

	sent, received := ct.counts()
	const pb = "application/vnd.kubernetes.protobuf"
	assert.Positive(t, sent["POST "+pb], "create bodies: %v", sent)
	assert.Positive(t, sent["PUT "+pb], "update bodies: %v", sent)
	assert.Positive(t, sent["DELETE "+pb], "DeleteOptions bodies: %v", sent)
	assert.Positive(t, received[pb], "responses: %v", received)
	assert.Zero(t, received["application/json"], "every answer was protobuf: %v", received)

	// The bytes survive: a Secret's binary data and a Deployment's
	// replicas come back as they were sent.
	s, err := cs.CoreV1().Secrets(ns).Create(context.Background(), newSecret("bin"), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 0xff}, s.Data["k"])
	d, err := cs.AppsV1().Deployments(ns).Create(context.Background(), newDeployment("web"), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(2), *d.Spec.Replicas)
	assert.Equal(t, "nginx:1.27", d.Spec.Template.Spec.Containers[0].Image)
}

// TestDefaultContentConfigInformers: a SharedInformerFactory on the
// default clientset syncs Pods, Services, Deployments, Secrets and
// ConfigMaps and sees later writes.
func TestDefaultContentConfigInformers(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t)
	cs, _ := srv.defaultClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	const ns = "default"
	_, err := cs.CoreV1().Pods(ns).Create(ctx, newPod("p0"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Services(ns).Create(ctx, newService("s0"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.AppsV1().Deployments(ns).Create(ctx, newDeployment("d0"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, newSecret("x0"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, newConfigMap("c0"), metav1.CreateOptions{})
	require.NoError(t, err)

	f := informers.NewSharedInformerFactory(cs, 0)
	stores := map[string]cache.SharedIndexInformer{
		"p": f.Core().V1().Pods().Informer(),
		"s": f.Core().V1().Services().Informer(),
		"d": f.Apps().V1().Deployments().Informer(),
		"x": f.Core().V1().Secrets().Informer(),
		"c": f.Core().V1().ConfigMaps().Informer(),
	}
	stop := make(chan struct{})
	f.Start(stop)
	defer func() { close(stop); f.Shutdown() }()
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		require.True(t, ok, "%v did not sync", typ)
	}
	for prefix, inf := range stores {
		_, exists, err := inf.GetStore().GetByKey(ns + "/" + prefix + "0")
		require.NoError(t, err)
		assert.True(t, exists, "%s0 in the synced cache", prefix)
	}

	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, newConfigMap("c1"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.AppsV1().Deployments(ns).Create(ctx, newDeployment("d1"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, "p0", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, c1, _ := stores["c"].GetStore().GetByKey(ns + "/c1")
		_, d1, _ := stores["d"].GetStore().GetByKey(ns + "/d1")
		_, p0, _ := stores["p"].GetStore().GetByKey(ns + "/p0")
		return c1 && d1 && !p0
	}, safetyTimeout, 20*time.Millisecond, "the informers see the writes")
}
