package controllerruntime_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"listwatch/apiserver"
	lwclient "listwatch/client"
	"listwatch/controllerruntime"
	"listwatch/controllers/manager"
)

// safetyTimeout bounds every wait for a state. It only turns a hang into
// a failure, so it is generous: on a busy machine under -race a correct
// server and manager get there in far less, and it is no bound on how fast.
const safetyTimeout = 3 * time.Minute

// TestMain gives controller-runtime's package-wide logger a sink before
// anything logs: without one, controller-runtime prints a warning with a
// stack trace after 30 seconds. The managers log through their own
// loggers (testLog), which a failing test prints.
func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// startServer starts our apiserver in this process on a loopback port,
// serving HTTPS (and HTTP/2) with a generated certificate, as interop/'s
// tests start it; it stops when the test ends.
func startServer(t testing.TB) *apiserver.Server {
	t.Helper()
	srv, err := apiserver.Start(context.Background(), apiserver.Config{Listen: "127.0.0.1:0", SelfSignedTLS: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return srv
}

// restConfig is what a user's kubeconfig for our server gives client-go:
// the address and the certificate to trust, nothing else.
func restConfig(srv *apiserver.Server) *rest.Config {
	return &rest.Config{Host: srv.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: srv.CACertificate()}}
}

// runOurControllers runs listwatch's own Deployment, ReplicaSet, kubelet
// stand-in and garbage collector (watching Websites as owners) against
// srv until the test ends: they make the Website's Deployment ready and
// delete a deleted Website's children, as kube-controller-manager would.
// The Website CRD must be served before they start.
func runOurControllers(t *testing.T, srv *apiserver.Server) {
	t.Helper()
	c, err := lwclient.New(lwclient.Config{Host: srv.URL(), CAData: srv.CACertificate(), UserAgent: "listwatch-controller-manager"})
	require.NoError(t, err)
	cfg := manager.Config{
		Client:            c,
		Controllers:       []string{manager.Deployment, manager.ReplicaSet, manager.Kubelet, manager.GC},
		GCKinds:           append(append([]manager.Kind(nil), manager.DefaultGCKinds...), manager.WebsiteGCKind),
		KubeletStartDelay: 20 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- manager.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done, "listwatch's controllers")
	})
}

// testLog keeps what a manager logs, printed when the test fails.
type testLog struct {
	mu    sync.Mutex
	lines []string
}

func newTestLog(t *testing.T) *testLog {
	l := &testLog{}
	t.Cleanup(func() {
		if t.Failed() {
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Logf("the managers' log:\n%s", strings.Join(l.lines, "\n"))
		}
	})
	return l
}

func (l *testLog) logger(name string) logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, name+" "+prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

// operator is one controller-runtime manager running the Reconciler.
type operator struct {
	name string
	mgr  ctrl.Manager
	rec  *controllerruntime.Reconciler
	stop context.CancelFunc
	done chan error
}

// leaseName is the Lease the operators compete for, as kubebuilder's
// scaffolding names it (a hash and the project's domain).
const leaseName = "a1b2c3d4.workshop.example.com"

// startOperator builds a manager as kubebuilder's cmd/main.go does, with
// leader election on (a Lease in the test namespace, given up when the manager stops),
// metrics and health probes off (no ports to collide on), and starts it.
// It stops when the test ends, if not before.
func startOperator(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme, name string, logs *testLog) *operator {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Logger:                        logs.logger(name),
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              leaseName,
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		// Two managers in one process register a controller of the same
		// name; each in its own process, as in production, would not.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	rec := &controllerruntime.Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder(name)}
	require.NoError(t, rec.SetupWithManager(mgr))
	ctx, cancel := context.WithCancel(context.Background())
	op := &operator{name: name, mgr: mgr, rec: rec, stop: cancel, done: make(chan error, 1)}
	go func() { op.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { op.shutdown(t) })
	return op
}

// shutdown stops the manager and waits for Start to return; leader
// election was released on the way out. Calling it again is a no-op.
func (o *operator) shutdown(t *testing.T) {
	t.Helper()
	o.stop()
	if err, ok := <-o.done; ok {
		close(o.done)
		require.NoError(t, err, "%s: manager.Start", o.name)
	}
}

// waitElected waits until the manager holds the Lease.
func (o *operator) waitElected(t *testing.T) {
	t.Helper()
	select {
	case <-o.mgr.Elected():
	case err := <-o.done:
		t.Fatalf("%s stopped before it was elected: %v", o.name, err)
	case <-time.After(safetyTimeout):
		t.Fatalf("%s was not elected (a hang guard, not a deadline)", o.name)
	}
}

// elected says whether the manager holds (or held) the Lease, without
// waiting.
func (o *operator) elected() bool {
	select {
	case <-o.mgr.Elected():
		return true
	default:
		return false
	}
}

// waitFor lists and watches the one object ns/name of list's kind until
// cond holds for it, and returns it; cond sees nil while the object does
// not exist.
func waitFor[T client.Object](t *testing.T, c client.WithWatch, list client.ObjectList, ns, name string, cond func(obj T) bool) T {
	t.Helper()
	var zero T
	got := waitForAll(t, c, list, ns, fields.OneTermEqualSelector("metadata.name", name), func(objs []T) bool {
		if len(objs) == 0 {
			return cond(zero)
		}
		return cond(objs[0])
	})
	if len(got) == 0 {
		return zero
	}
	return got[0]
}

// waitForAll lists and watches the objects of list's kind in ns that
// match sel (client-go's watchtools.UntilWithSync, an informer
// underneath) until cond holds for them all, and returns them. Nothing
// polls: cond looks at the objects after every change the server sends.
func waitForAll[T client.Object](t *testing.T, c client.WithWatch, list client.ObjectList, ns string, sel fields.Selector, cond func(objs []T) bool) []T {
	t.Helper()
	opts := func(raw metav1.ListOptions) *client.ListOptions {
		return &client.ListOptions{Namespace: ns, FieldSelector: sel, Raw: &raw}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, raw metav1.ListOptions) (runtime.Object, error) {
			l := list.DeepCopyObject().(client.ObjectList)
			return l, c.List(ctx, l, opts(raw))
		},
		WatchFuncWithContext: func(ctx context.Context, raw metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), opts(raw))
		},
	}
	seen := map[string]T{}
	var last []T
	check := func() bool {
		last = last[:0]
		for _, k := range slices.Sorted(maps.Keys(seen)) {
			last = append(last, seen[k])
		}
		return cond(last)
	}
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	_, err := watchtools.UntilWithSync(ctx, lw, newOf[T](), func(store cache.Store) (bool, error) {
		for _, obj := range store.List() {
			o := obj.(T)
			seen[key(o.GetNamespace(), o.GetName())] = o
		}
		return check(), nil
	}, func(ev watch.Event) (bool, error) {
		switch ev.Type {
		case watch.Added, watch.Modified:
			o := ev.Object.(T)
			seen[key(o.GetNamespace(), o.GetName())] = o
		case watch.Deleted:
			o := ev.Object.(T)
			delete(seen, key(o.GetNamespace(), o.GetName()))
		case watch.Error:
			return false, fmt.Errorf("watch error: %v", ev.Object)
		}
		return check(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %T in %q (%v): %v; last seen: %s", list, ns, sel, err, describe(last))
	}
	return last
}

// describe prints objects for a failure message.
func describe[T client.Object](objs []T) string {
	var b strings.Builder
	for _, o := range objs {
		fmt.Fprintf(&b, "\n%+v", o)
	}
	return b.String()
}

// newOf returns a new, empty object of pointer type T: the type the
// informer underneath waitFor expects.
func newOf[T client.Object]() T {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
}

func key(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// startEnvtest starts env against our running server. envtest's Start
// first polls for the default namespace for a fixed 5 seconds
// (waitForDefaultNamespace in controller-runtime v0.25.2
// pkg/envtest/server.go, not configurable), and on two busy cores under
// -race its first request, with the client it builds, has taken longer:
// our server creates the namespace before it listens, so that deadline
// measures the machine, not the server. Start has done nothing else by
// then (no CRD is installed before the wait), so it is safe to call again;
// only that error is retried, and only within safetyTimeout.
func startEnvtest(t *testing.T, env *envtest.Environment) {
	t.Helper()
	deadline := time.Now().Add(safetyTimeout)
	for {
		_, err := env.Start()
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "default namespace didn't register within deadline") || time.Now().After(deadline) {
			require.NoError(t, err, "envtest.Environment.Start against our apiserver")
		}
		t.Logf("envtest.Environment.Start: %v; starting it again", err)
	}
}
