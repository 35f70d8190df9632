package replicaset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/informer"
	"listwatch/internal/leakcheck"
)

// The controller's sync (reconcile) against its caches, filled by hand,
// and a stand-in for kube-apiserver that records the writes it makes.

// podServer answers Pod creates (201, named from generateName) and
// deletes (200), and ReplicaSet status writes, recording each; createCode,
// if set, answers every create with that code instead.
type podServer struct {
	mu         sync.Mutex
	createCode int
	created    []*api.Object
	deleted    []string // "<name> <body>"
	statuses   []string // each status written
	other      []string
}

func (s *podServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/default/pods" && s.createCode != 0:
		w.WriteHeader(s.createCode)
		_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"no","code":%d}`, s.createCode)
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/default/pods":
		p := &api.Object{}
		if err := p.UnmarshalJSON(body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		p.Metadata.Name = fmt.Sprintf("%s%d", p.Metadata.GenerateName, len(s.created))
		s.created = append(s.created, p)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(p.AppendJSON(nil))
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/default/pods/"):
		s.deleted = append(s.deleted, strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/default/pods/")+" "+string(body))
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":200}`)
	case r.Method == http.MethodPut && r.URL.Path == "/apis/apps/v1/namespaces/default/replicasets/web/status":
		rs := &api.Object{}
		_ = rs.UnmarshalJSON(body)
		s.statuses = append(s.statuses, string(rs.Get("status")))
		_, _ = w.Write(body)
	default:
		s.other = append(s.other, r.Method+" "+r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}`)
	}
}

// eventLog records the Events the controller records.
type eventLog struct {
	mu      sync.Mutex
	reasons []string
}

func (l *eventLog) Eventf(ref controllers.ObjectReference, _, reason, _ string, _ ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reasons = append(l.reasons, ref.Name+" "+reason)
}

func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reasons
	l.reasons = nil
	return out
}

// newTestController builds a controller on srv whose informers never run:
// the test fills their caches.
func newTestController(t *testing.T, srv http.Handler) (*Controller, *eventLog) {
	t.Helper()
	t.Cleanup(leakcheck.Check(t))
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := client.New(client.Config{Host: hs.URL})
	require.NoError(t, err)
	rss, err := informer.NewSharedIndexInformer(c.Resource(ReplicaSets), informer.Options{})
	require.NoError(t, err)
	pods, err := informer.NewSharedIndexInformer(c.Resource(Pods), informer.Options{})
	require.NoError(t, err)
	events := &eventLog{}
	ctrl, err := New(Options{Client: c, ReplicaSets: rss, Pods: pods, Events: events})
	require.NoError(t, err)
	t.Cleanup(ctrl.queue.ShutDown) // never Run: stop its queue's timer goroutine
	return ctrl, events
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// replicaSet is ReplicaSet default/web (uid-rs, generation 2) wanting
// replicas Pods labelled app=web.
func replicaSet(t *testing.T, replicas int) *api.Object {
	rs := &api.Object{APIVersion: APIVersion, Kind: Kind, Metadata: api.ObjectMeta{
		Namespace: "default", Name: "web", UID: "uid-rs", Generation: 2, ResourceVersion: "7"}}
	require.NoError(t, rs.Set("spec", json.RawMessage(fmt.Sprintf(`{"replicas":%d,"selector":{"matchLabels":{"app":"web"}},`+
		`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}`, replicas))))
	return rs
}

// pod is a Pod of owner (nil: none) in phase, ready or not, created at.
func pod(t *testing.T, name string, owner *api.Object, ready bool, at time.Time) *api.Object {
	p := &api.Object{APIVersion: "v1", Kind: "Pod", Metadata: api.ObjectMeta{Namespace: "default", Name: name,
		UID: "uid-" + name, Labels: map[string]string{"app": "web"}, CreationTimestamp: at}}
	if owner != nil {
		require.NoError(t, controllers.SetOwnerReferences(p, []controllers.OwnerReference{controllers.ControllerRef(owner)}))
	}
	status := `{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}`
	if ready {
		status = `{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}`
	}
	require.NoError(t, p.Set("status", json.RawMessage(status)))
	return p
}

// testContext only turns a hang into a failure.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Scaling up: the missing Pods are created from the template, controlled
// by the ReplicaSet, and nothing more is created until the cache has seen
// them (the expectations); the status counts what the cache shows.
func TestReconcileCreatesMissingPodsOnceEach(t *testing.T) {
	srv := &podServer{}
	c, events := newTestController(t, srv)
	ctx := testContext(t)
	rs := replicaSet(t, 3)
	other := replicaSet(t, 1)
	other.Metadata.UID = "uid-other"
	terminating := pod(t, "web-gone", rs, true, t0)
	terminating.Metadata.DeletionTimestamp = &t0
	require.NoError(t, c.opts.ReplicaSets.GetIndexer().Add(rs))
	for _, p := range []*api.Object{
		pod(t, "web-a", rs, true, t0),      // the one active Pod of web
		pod(t, "other-a", other, true, t0), // another ReplicaSet's
		pod(t, "stranger", nil, true, t0),  // nobody's
		terminating,                        // web's, being deleted
	} {
		require.NoError(t, c.opts.Pods.GetIndexer().Add(p))
	}

	require.NoError(t, c.reconcile(ctx, "default/web"))
	srv.mu.Lock()
	require.Len(t, srv.created, 2, "3 wanted, 1 active")
	for _, p := range srv.created {
		assert.Equal(t, "web-", p.Metadata.GenerateName)
		assert.Equal(t, map[string]string{"app": "web"}, p.Metadata.Labels)
		ref, ok := controllers.ControllerOf(p)
		require.True(t, ok)
		assert.Equal(t, "uid-rs", ref.UID)
		assert.JSONEq(t, `{"containers":[{"name":"c","image":"nginx"}]}`, string(p.Get("spec")))
	}
	require.Len(t, srv.statuses, 1)
	assert.JSONEq(t, `{"replicas":1,"fullyLabeledReplicas":1,"readyReplicas":1,"availableReplicas":1,"observedGeneration":2}`, srv.statuses[0])
	created := srv.created
	srv.mu.Unlock()
	assert.Equal(t, []string{"web SuccessfulCreate", "web SuccessfulCreate"}, events.take())

	// The cache has not seen the new Pods yet: another sync creates none.
	assert.False(t, c.expect.Satisfied("default/web"))
	require.NoError(t, c.reconcile(ctx, "default/web"))
	srv.mu.Lock()
	assert.Len(t, srv.created, 2, "no Pod created twice")
	srv.mu.Unlock()

	// The informer delivers them: the expectations are met.
	h := c.podHandler()
	for _, p := range created {
		h.OnAdd(p, false)
	}
	assert.True(t, c.expect.Satisfied("default/web"))
	assert.Equal(t, 1, c.queue.Len(), "each creation queued web again, merged into one")
}

// Scaling down: the Pods that did the least work go first (not ready
// before ready, then the newest), each deleted at its UID.
func TestReconcileDeletesTheLeastUsefulPods(t *testing.T) {
	srv := &podServer{}
	c, events := newTestController(t, srv)
	rs := replicaSet(t, 1)
	require.NoError(t, c.opts.ReplicaSets.GetIndexer().Add(rs))
	for _, p := range []*api.Object{
		pod(t, "ready-old", rs, true, t0),
		pod(t, "unready-old", rs, false, t0.Add(time.Minute)),
		pod(t, "unready-new", rs, false, t0.Add(2*time.Minute)),
	} {
		require.NoError(t, c.opts.Pods.GetIndexer().Add(p))
	}
	require.NoError(t, c.reconcile(testContext(t), "default/web"))
	srv.mu.Lock()
	require.Len(t, srv.deleted, 2)
	assert.True(t, strings.HasPrefix(srv.deleted[0], "unready-new "), srv.deleted[0])
	assert.Contains(t, srv.deleted[0], `"uid":"uid-unready-new"`)
	assert.True(t, strings.HasPrefix(srv.deleted[1], "unready-old "), srv.deleted[1])
	assert.Empty(t, srv.created)
	srv.mu.Unlock()
	assert.Equal(t, []string{"web SuccessfulDelete", "web SuccessfulDelete"}, events.take())
	assert.False(t, c.expect.Satisfied("default/web"), "two deletions expected")
}

// A failed create is recorded and retried; the creations never tried are
// not waited for.
func TestReconcileCreateFailureIsRetried(t *testing.T) {
	srv := &podServer{createCode: http.StatusInternalServerError}
	c, events := newTestController(t, srv)
	require.NoError(t, c.opts.ReplicaSets.GetIndexer().Add(replicaSet(t, 4)))
	err := c.reconcile(testContext(t), "default/web")
	require.Error(t, err)
	assert.Equal(t, []string{"web FailedCreate"}, events.take(), "the first batch, of one, failed: no more tried")
	assert.True(t, c.expect.Satisfied("default/web"), "no creation is awaited")
}

// A ReplicaSet gone from the cache, or with an unreadable spec, is not
// retried and writes nothing.
func TestReconcileLeavesGoneAndBadReplicaSetsAlone(t *testing.T) {
	srv := &podServer{}
	c, _ := newTestController(t, srv)
	ctx := testContext(t)
	require.NoError(t, c.reconcile(ctx, "default/web"))
	bad := replicaSet(t, 1)
	require.NoError(t, bad.Set("spec", json.RawMessage(`{"replicas":1,"selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{}}}`)))
	require.NoError(t, c.opts.ReplicaSets.GetIndexer().Add(bad))
	require.NoError(t, c.reconcile(ctx, "default/web"))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	assert.Empty(t, srv.created)
	assert.Empty(t, srv.statuses)
	assert.Empty(t, srv.other)
}

// The status is written only when it changes.
func TestReconcileWritesAnUnchangedStatusOnce(t *testing.T) {
	srv := &podServer{}
	c, _ := newTestController(t, srv)
	rs := replicaSet(t, 1)
	require.NoError(t, rs.Set("status", json.RawMessage(`{"replicas":1,"fullyLabeledReplicas":1,"readyReplicas":1,"availableReplicas":1,"observedGeneration":2}`)))
	require.NoError(t, c.opts.ReplicaSets.GetIndexer().Add(rs))
	require.NoError(t, c.opts.Pods.GetIndexer().Add(pod(t, "web-a", rs, true, t0)))
	require.NoError(t, c.reconcile(testContext(t), "default/web"))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	assert.Empty(t, srv.statuses)
	assert.Empty(t, srv.created)
	assert.Empty(t, srv.deleted)
}

// slowStartBatch tries 1, then 2, then 4 ... at once, and stops after the
// first batch with a failure.
func TestSlowStartBatchStopsAfterAFailingBatch(t *testing.T) {
	var calls atomic.Int32
	done, err := slowStartBatch(10, func() error {
		if calls.Add(1) > 3 {
			return errors.New("quota")
		}
		return nil
	})
	assert.Error(t, err)
	assert.Equal(t, 3, done, "batches of 1 and 2 succeeded")
	assert.Equal(t, int32(7), calls.Load(), "the batch of 4 was the last")

	calls.Store(0)
	done, err = slowStartBatch(10, func() error { calls.Add(1); return nil })
	require.NoError(t, err)
	assert.Equal(t, 10, done)
	assert.Equal(t, int32(10), calls.Load())
}
