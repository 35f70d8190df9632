package website

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
	"listwatch/controllers"
	"listwatch/internal/leakcheck"
)

// childServer answers the operator's writes as kube-apiserver would while a
// Deployment of the Website's name exists that the operator's cache has not
// seen: its create gets 409 AlreadyExists until the test deletes it. Any
// other request is recorded and answered 404.
type childServer struct {
	mu       sync.Mutex
	exists   bool          // the old Deployment is still on the server
	created  []*api.Object // Deployments created
	statuses int           // status writes
	other    []string
}

func (s *childServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/apis/apps/v1/namespaces/default/deployments" && s.exists:
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \"w1\" already exists","reason":"AlreadyExists","details":{"name":"w1","group":"apps","kind":"deployments"},"code":409}`)
	case r.Method == http.MethodPost && r.URL.Path == "/apis/apps/v1/namespaces/default/deployments":
		o := &api.Object{}
		if err := o.UnmarshalJSON(body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		s.created = append(s.created, o)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	case r.Method == http.MethodPut && r.URL.Path == "/apis/workshop.example.com/v1/namespaces/default/websites/w1/status":
		s.statuses++
		_, _ = w.Write(body)
	default:
		s.other = append(s.other, r.Method+" "+r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}`)
	}
}

// A Website deleted and created again under the same name while the
// operator's Deployment informer is away: the server still holds the old
// Website's Deployment (the garbage collector has not removed it yet), the
// operator's cache does not. The operator's create is answered 409
// AlreadyExists. If it took that as success, nothing would ever queue the
// Website again once the collector deletes the old Deployment while the
// informer is still away (its re-list shows neither the Deployment nor its
// deletion): the Website would stay without a Deployment for good. The
// chaos run of the controllers ended that way on a busy machine. The
// reconcile must fail instead, so that its key is retried.
func TestReconcileRetriesAChildThatExistsButIsNotInTheCache(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := &childServer{exists: true}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := client.New(client.Config{Host: hs.URL})
	require.NoError(t, err)
	op, err := New(Options{Client: c, Namespace: "default"})
	require.NoError(t, err)
	t.Cleanup(op.queue.ShutDown) // never Run: stop its queue's timer goroutine

	// The caches, filled by hand: the new Website and its ConfigMap, and no
	// Deployment.
	site := &api.Object{APIVersion: APIVersion, Kind: Kind, Metadata: api.ObjectMeta{
		Namespace: "default", Name: "w1", UID: "uid-new", Generation: 1, ResourceVersion: "10"}}
	require.NoError(t, site.Set("spec", json.RawMessage(`{"message":"hi"}`)))
	require.NoError(t, op.sites.GetIndexer().Add(site))
	data, _, _ := Want("w1", Spec{Message: "hi"})
	cm := &api.Object{Metadata: api.ObjectMeta{Namespace: "default", Name: ContentName("w1"), UID: "uid-cm"}}
	require.NoError(t, cm.Set("data", data))
	require.NoError(t, controllers.SetOwnerReferences(cm, []controllers.OwnerReference{controllers.ControllerRef(site)}))
	require.NoError(t, op.cms.GetIndexer().Add(cm))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only turns a hang into a failure
	defer cancel()
	err = op.reconcile(ctx, "default/w1")
	require.Error(t, err, "the Deployment exists only on the server: the key must be retried")
	assert.True(t, client.IsAlreadyExists(err), "the cause is kept: %v", err)
	srv.mu.Lock()
	assert.Zero(t, srv.statuses, "no status is written before the children are right")
	srv.exists = false // the collector deleted the old Deployment; the cache never saw it
	srv.mu.Unlock()

	require.NoError(t, op.reconcile(ctx, "default/w1"), "the retry")
	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.Len(t, srv.created, 1, "the retry created the Deployment")
	ref, ok := controllers.ControllerOf(srv.created[0])
	assert.True(t, ok)
	assert.Equal(t, "uid-new", ref.UID, "controlled by the new Website")
	assert.Equal(t, 1, srv.statuses)
	assert.Empty(t, srv.other)
}
