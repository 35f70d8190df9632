package serviceaccount

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/internal/leakcheck"
)

// The controller's sync (reconcile) against its caches, filled by hand,
// and a stand-in for kube-apiserver that records the one write it makes.

// saServer answers each create of a ServiceAccount with code and body
// (201 and the object when code is 0) and records its path and name; any
// other request is recorded and answered 404.
type saServer struct {
	mu      sync.Mutex
	code    int
	body    string
	created []string // "<path> <name>" of each create
	other   []string
}

func (s *saServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost {
		s.other = append(s.other, r.Method+" "+r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}`)
		return
	}
	o := &api.Object{}
	_ = o.UnmarshalJSON(body)
	s.created = append(s.created, r.URL.Path+" "+o.Metadata.Name)
	if s.code != 0 {
		w.WriteHeader(s.code)
		_, _ = io.WriteString(w, s.body)
		return
	}
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

// creates returns the creates so far and forgets them.
func (s *saServer) creates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.created
	s.created = nil
	return out
}

// newTestController builds a controller on srv whose informers never run:
// the test fills their caches.
func newTestController(t *testing.T, srv http.Handler) *Controller {
	t.Helper()
	t.Cleanup(leakcheck.Check(t))
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := client.New(client.Config{Host: hs.URL})
	require.NoError(t, err)
	nss, err := informer.NewSharedIndexInformer(c.Resource(Namespaces), informer.Options{})
	require.NoError(t, err)
	sas, err := informer.NewSharedIndexInformer(c.Resource(ServiceAccounts), informer.Options{})
	require.NoError(t, err)
	ctrl, err := New(Options{Client: c, Namespaces: nss, ServiceAccounts: sas})
	require.NoError(t, err)
	t.Cleanup(ctrl.queue.ShutDown) // never Run: stop its queue's timer goroutine
	return ctrl
}

func namespace(t *testing.T, name, phase string) *api.Object {
	ns := &api.Object{APIVersion: "v1", Kind: "Namespace", Metadata: api.ObjectMeta{Name: name}}
	st, err := json.Marshal(map[string]string{"phase": phase})
	require.NoError(t, err)
	require.NoError(t, ns.Set("status", st))
	return ns
}

// testContext only turns a hang into a failure.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestReconcileCreatesTheMissingDefault(t *testing.T) {
	srv := &saServer{}
	c := newTestController(t, srv)
	ctx := testContext(t)
	require.NoError(t, c.opts.Namespaces.GetIndexer().Add(namespace(t, "a", "Active")))

	require.NoError(t, c.reconcile(ctx, "a"))
	assert.Equal(t, []string{"/api/v1/namespaces/a/serviceaccounts default"}, srv.creates())

	// Once the cache has it, there is nothing to do.
	sa := &api.Object{APIVersion: "v1", Kind: "ServiceAccount", Metadata: api.ObjectMeta{Namespace: "a", Name: "default"}}
	require.NoError(t, c.opts.ServiceAccounts.GetIndexer().Add(sa))
	require.NoError(t, c.reconcile(ctx, "a"))
	assert.Empty(t, srv.creates())
	assert.Empty(t, srv.other)
}

// Nothing may be created in a namespace being deleted, nor in one gone.
func TestReconcileLeavesTerminatingAndGoneNamespacesAlone(t *testing.T) {
	srv := &saServer{}
	c := newTestController(t, srv)
	ctx := testContext(t)
	require.NoError(t, c.opts.Namespaces.GetIndexer().Add(namespace(t, "t", "Terminating")))
	require.NoError(t, c.reconcile(ctx, "t"))
	require.NoError(t, c.reconcile(ctx, "gone"))
	assert.Empty(t, srv.creates())
	assert.Empty(t, srv.other)
}

// 409 (the cache was behind) and 403 NamespaceTerminating (the namespace
// began terminating) are done; any other failure is retried.
func TestReconcileAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  int
		body  string
		retry bool
	}{
		{"already exists", http.StatusConflict, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"serviceaccounts \"default\" already exists","reason":"AlreadyExists","details":{"name":"default","kind":"serviceaccounts"},"code":409}`, false},
		{"namespace terminating", http.StatusForbidden, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"serviceaccounts \"default\" is forbidden: unable to create new content in namespace a because it is being terminated",` +
			`"reason":"Forbidden","details":{"name":"default","kind":"serviceaccounts","causes":[{"reason":"NamespaceTerminating",` +
			`"message":"namespace a is being terminated","field":"metadata.namespace"}]},"code":403}`, false},
		{"forbidden otherwise", http.StatusForbidden, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"forbidden","reason":"Forbidden","code":403}`, true},
		{"server error", http.StatusInternalServerError, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"etcd is down","reason":"InternalError","code":500}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &saServer{code: tc.code, body: tc.body}
			c := newTestController(t, srv)
			require.NoError(t, c.opts.Namespaces.GetIndexer().Add(namespace(t, "a", "Active")))
			err := c.reconcile(testContext(t), "a")
			if tc.retry {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
			assert.Len(t, srv.creates(), 1)
		})
	}
}
