package namespace

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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

// The controller's sync (reconcile) against its cache, filled by hand,
// and a stand-in for kube-apiserver holding one namespace's content.

// contentServer serves discovery and the objects of namespace "gone":
// ConfigMaps, which allow deletecollection (one of them, "held", has a
// finalizer: a delete marks it and it stays until the test releases it),
// Deployments, which allow only deleting one at a time, and Secrets,
// which cannot be deleted at all (left alone). It records every write.
type contentServer struct {
	mu          sync.Mutex
	configMaps  map[string]bool // name → being deleted
	deployments []string
	writes      []string
	finalized   []string // spec.finalizers of each finalize
}

func newContentServer() *contentServer {
	return &contentServer{configMaps: map[string]bool{"plain": false, "held": false}, deployments: []string{"web"}}
}

const (
	coreV1 = `{"kind":"APIResourceList","groupVersion":"v1","resources":[` +
		`{"name":"namespaces","namespaced":false,"kind":"Namespace","verbs":["create","delete","get","list","watch"]},` +
		`{"name":"configmaps","namespaced":true,"kind":"ConfigMap","verbs":["create","delete","deletecollection","get","list","watch"]},` +
		`{"name":"secrets","namespaced":true,"kind":"Secret","verbs":["get","list"]},` +
		`{"name":"pods/status","namespaced":true,"kind":"Pod","verbs":["get","patch","update"]}]}`
	appsV1 = `{"kind":"APIResourceList","groupVersion":"apps/v1","resources":[` +
		`{"name":"deployments","namespaced":true,"kind":"Deployment","verbs":["delete","get","list"]}]}`
	success = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":200}`
)

func (s *contentServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodGet {
		s.writes = append(s.writes, r.Method+" "+r.URL.Path+" "+string(body))
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /api":
		_, _ = io.WriteString(w, `{"kind":"APIVersions","versions":["v1"]}`)
	case "GET /apis":
		_, _ = io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]}`)
	case "GET /api/v1":
		_, _ = io.WriteString(w, coreV1)
	case "GET /apis/apps/v1":
		_, _ = io.WriteString(w, appsV1)
	case "DELETE /api/v1/namespaces/gone/configmaps":
		for name := range s.configMaps {
			if name == "held" {
				s.configMaps[name] = true
			} else {
				delete(s.configMaps, name)
			}
		}
		_, _ = io.WriteString(w, success)
	case "GET /api/v1/namespaces/gone/configmaps":
		var items []string
		for name, deleting := range s.configMaps {
			item := `{"metadata":{"name":"` + name + `","namespace":"gone","uid":"uid-` + name + `"`
			if deleting {
				item += `,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["example.com/hold"]`
			}
			items = append(items, item+`}}`)
		}
		_, _ = io.WriteString(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[`+strings.Join(items, ",")+`]}`)
	case "GET /api/v1/namespaces/gone/secrets":
		_, _ = io.WriteString(w, `{"kind":"SecretList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"s","namespace":"gone","uid":"uid-s"}}]}`)
	case "GET /apis/apps/v1/namespaces/gone/deployments":
		var items []string
		for _, name := range s.deployments {
			items = append(items, `{"metadata":{"name":"`+name+`","namespace":"gone","uid":"uid-`+name+`"}}`)
		}
		_, _ = io.WriteString(w, `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"9"},"items":[`+strings.Join(items, ",")+`]}`)
	case "DELETE /apis/apps/v1/namespaces/gone/deployments/web":
		s.deployments = nil
		_, _ = io.WriteString(w, success)
	case "PUT /api/v1/namespaces/gone/finalize":
		var ns struct {
			Spec struct{ Finalizers []string } `json:"spec"`
		}
		_ = json.Unmarshal(body, &ns)
		s.finalized = append(s.finalized, strings.Join(ns.Spec.Finalizers, ","))
		_, _ = w.Write(body)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}`)
	}
}

// takeWrites returns the writes so far and forgets them.
func (s *contentServer) takeWrites() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.writes
	s.writes = nil
	return out
}

// newTestController builds a controller on srv whose informer never runs:
// the test fills its cache.
func newTestController(t *testing.T, srv http.Handler) *Controller {
	t.Helper()
	t.Cleanup(leakcheck.Check(t))
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := client.New(client.Config{Host: hs.URL})
	require.NoError(t, err)
	nss, err := informer.NewSharedIndexInformer(c.Resource(Namespaces), informer.Options{})
	require.NoError(t, err)
	ctrl, err := New(Options{Client: c, Namespaces: nss})
	require.NoError(t, err)
	t.Cleanup(ctrl.queue.ShutDown) // never Run: stop its queue's timer goroutine
	return ctrl
}

// namespace is Namespace "gone" with spec.finalizers, being deleted if
// deleting.
func namespace(t *testing.T, deleting bool, finalizers ...string) *api.Object {
	ns := &api.Object{APIVersion: "v1", Kind: "Namespace", Metadata: api.ObjectMeta{Name: "gone", UID: "uid-ns"}}
	if deleting {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		ns.Metadata.DeletionTimestamp = &now
	}
	require.NoError(t, setSpecFinalizers(ns, finalizers))
	return ns
}

// testContext only turns a hang into a failure.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A namespace being deleted is emptied, every resource the way it allows
// (a collection delete, or one delete per object at its UID), and
// finalized only once nothing is left.
func TestReconcileEmptiesThenFinalizes(t *testing.T) {
	srv := newContentServer()
	c := newTestController(t, srv)
	ctx := testContext(t)
	require.NoError(t, c.opts.Namespaces.GetIndexer().Add(namespace(t, true, "kubernetes", "example.com/other")))

	err := c.reconcile(ctx, "gone")
	require.ErrorIs(t, err, errContentRemains, "the held ConfigMap is still there")
	writes := srv.takeWrites()
	require.Len(t, writes, 2, "%q", writes)
	assert.True(t, strings.HasPrefix(writes[0], "DELETE /api/v1/namespaces/gone/configmaps "), writes[0])
	assert.Contains(t, writes[0], `"propagationPolicy":"Background"`)
	assert.True(t, strings.HasPrefix(writes[1], "DELETE /apis/apps/v1/namespaces/gone/deployments/web "), writes[1])
	assert.Contains(t, writes[1], `"uid":"uid-web"`, "deleted at the UID it listed")

	// Again while the ConfigMap is held: it is being deleted, so it is
	// not deleted again, and the namespace still waits.
	require.ErrorIs(t, c.reconcile(ctx, "gone"), errContentRemains)
	writes = srv.takeWrites()
	require.Len(t, writes, 1, "%q", writes)
	assert.True(t, strings.HasPrefix(writes[0], "DELETE /api/v1/namespaces/gone/configmaps "), writes[0])

	srv.mu.Lock()
	delete(srv.configMaps, "held") // its finalizer is done
	srv.mu.Unlock()
	require.NoError(t, c.reconcile(ctx, "gone"))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	assert.Equal(t, []string{"example.com/other"}, srv.finalized, "only this controller's finalizer is removed")
}

// A namespace not being deleted, or no longer carrying this controller's
// finalizer, or gone, is left alone: no request at all.
func TestReconcileLeavesOtherNamespacesAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		ns   *api.Object
	}{
		{"active", namespace(t, false, "kubernetes")},
		{"finalized already", namespace(t, true, "example.com/other")},
		{"gone", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newContentServer()
			c := newTestController(t, srv)
			if tc.ns != nil {
				require.NoError(t, c.opts.Namespaces.GetIndexer().Add(tc.ns))
			}
			require.NoError(t, c.reconcile(testContext(t), "gone"))
			assert.Empty(t, srv.takeWrites())
		})
	}
}

// A failing discovery is retried, and finalizes nothing.
func TestReconcileRetriesWhenDiscoveryFails(t *testing.T) {
	c := newTestController(t, http.NotFoundHandler())
	require.NoError(t, c.opts.Namespaces.GetIndexer().Add(namespace(t, true, "kubernetes")))
	err := c.reconcile(testContext(t), "gone")
	require.Error(t, err)
	assert.False(t, errors.Is(err, errContentRemains))
	assert.Contains(t, err.Error(), "discovery")
}
