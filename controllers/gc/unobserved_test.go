package gc

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/informer"
	"listwatch/internal/leakcheck"
)

// fleetingOwnerServer plays kube-apiserver for a ConfigMap "w3-content"
// owned by Website w3 (uid-w3), a Website that lives only while the
// collector's informer is away: the first GET finds it, every later one
// answers 404, and the informer never sees it come or go.
type fleetingOwnerServer struct {
	mu      sync.Mutex
	gets    int
	deletes int
}

func (s *fleetingOwnerServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/apis/workshop.example.com/v1/namespaces/default/websites/w3":
		s.gets++
		if s.gets == 1 {
			_, _ = io.WriteString(w, `{"apiVersion":"workshop.example.com/v1","kind":"Website","metadata":{"name":"w3","namespace":"default","uid":"uid-w3","resourceVersion":"7"}}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"websites.workshop.example.com \"w3\" not found","reason":"NotFound","details":{"name":"w3","group":"workshop.example.com","kind":"websites"},"code":404}`)
	case r.Method == http.MethodDelete && r.URL.Path == "/api/v1/namespaces/default/configmaps/w3-content":
		s.deletes++
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":200}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}`)
	}
}

// A dependent whose owner exists on the server but has never reached the
// owner's informer is looked at again, as Kubernetes' collector requeues an
// owner it has not observed: otherwise, once that owner is deleted, no
// event would ever queue the dependent (the informer never had the owner,
// so it has no deletion to tell of) and it would stay orphaned.
func TestCollectorRetriesADependentWhoseOwnerItHasNotObserved(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := &fleetingOwnerServer{}
	g, _ := newFleetingCollector(t, srv) // no Website in the cache at all

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only turns a hang into a failure
	defer cancel()
	it := item{res: 1, key: "default/w3-content"}

	// The owner is on the server only: the ConfigMap stays, and the
	// reconcile fails so that the worker retries it.
	err := g.reconcile(ctx, it)
	require.Error(t, err)
	assert.True(t, errors.Is(err, errOwnerNotObserved), "%v", err)
	srv.mu.Lock()
	assert.Zero(t, srv.deletes, "a live owner's dependent is not deleted")
	srv.mu.Unlock()

	// The retry: the owner is gone now, and the ConfigMap is collected.
	require.NoError(t, g.reconcile(ctx, it))
	srv.mu.Lock()
	assert.Equal(t, 2, srv.gets)
	assert.Equal(t, 1, srv.deletes, "the orphan is deleted on the retry")
	srv.mu.Unlock()
}

// An owner the informer has delivered needs no second look: its deletion
// will reach the collector as an event, which queues its dependents.
func TestCollectorTrustsAnOwnerItHasObserved(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := &fleetingOwnerServer{}
	g, siteInf := newFleetingCollector(t, srv)

	require.NoError(t, siteInf.GetIndexer().Add(&api.Object{Metadata: api.ObjectMeta{Namespace: "default", Name: "w3", UID: "uid-w3", ResourceVersion: "7"}}))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only turns a hang into a failure
	defer cancel()
	require.NoError(t, g.reconcile(ctx, item{res: 1, key: "default/w3-content"}))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	assert.Zero(t, srv.gets, "the cache answered")
	assert.Zero(t, srv.deletes)
}

// newFleetingCollector builds a collector of Websites and ConfigMaps on
// srv, never run, whose ConfigMap cache holds w3-content owned by Website
// w3 (uid-w3); it returns the collector and the Websites' informer.
func newFleetingCollector(t *testing.T, srv *fleetingOwnerServer) (*Collector, *informer.SharedIndexInformer) {
	t.Helper()
	cm := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{
		Namespace: "default", Name: "w3-content", UID: "uid-cm", ResourceVersion: "8"}}
	cms := api.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	return newStubCollector(t, srv, cms, "ConfigMap", cm, "w3", "uid-w3")
}
