package gc

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
)

// adoptingServer plays kube-apiserver for a Deployment "w1" that the
// collector's cache shows owned by a Website that is gone (uid-old, at
// resourceVersion 5) while on the server a new Website of the same name has
// already adopted it (uid-new, resourceVersion 6).
type adoptingServer struct {
	mu      sync.Mutex
	deletes []string // the resourceVersion precondition of each DELETE
	deleted bool
}

func (s *adoptingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/apis/workshop.example.com/v1/namespaces/default/websites/w1":
		_, _ = io.WriteString(w, `{"apiVersion":"workshop.example.com/v1","kind":"Website","metadata":{"name":"w1","namespace":"default","uid":"uid-new","resourceVersion":"4"}}`)
	case r.Method == http.MethodGet && r.URL.Path == "/apis/apps/v1/namespaces/default/deployments/w1":
		_, _ = io.WriteString(w, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w1","namespace":"default","uid":"uid-dep","resourceVersion":"6",`+
			`"ownerReferences":[{"apiVersion":"workshop.example.com/v1","kind":"Website","name":"w1","uid":"uid-new","controller":true}]}}`)
	case r.Method == http.MethodDelete && r.URL.Path == "/apis/apps/v1/namespaces/default/deployments/w1":
		var opts struct {
			Preconditions struct{ ResourceVersion, UID string }
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &opts)
		s.deletes = append(s.deletes, opts.Preconditions.ResourceVersion)
		if opts.Preconditions.ResourceVersion != "" && opts.Preconditions.ResourceVersion != "6" {
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on deployments.apps \"w1\": the ResourceVersion in the precondition (5) does not match the ResourceVersion in record (6). The object might have been modified","reason":"Conflict","code":409}`)
			return
		}
		s.deleted = true
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":200}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}`)
	}
}

// The collector read a Deployment whose only owner, Website w1 uid-old, is
// gone. Before it deletes it, the operator of the new Website w1 (uid-new)
// adopts it. Deleting by uid alone would remove the new Website's child;
// deleting at the resourceVersion read, as Kubernetes' collector does,
// fails with 409 and leaves it.
func TestCollectorDoesNotDeleteADependentAdoptedMeanwhile(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := &adoptingServer{}
	// The cache: the Deployment as it was, owned by the old Website; no
	// Website (the new one has not reached the cache either).
	old := &api.Object{APIVersion: "apps/v1", Kind: "Deployment", Metadata: api.ObjectMeta{
		Namespace: "default", Name: "w1", UID: "uid-dep", ResourceVersion: "5"}}
	deps := api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	g, _ := newStubCollector(t, srv, deps, "Deployment", old, "w1", "uid-old")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only turns a hang into a failure
	defer cancel()
	require.NoError(t, g.reconcile(ctx, item{res: 1, key: "default/w1"}))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	assert.Equal(t, []string{"5"}, srv.deletes, "one delete, at the resourceVersion the owners were read at")
	assert.False(t, srv.deleted, "the new Website's Deployment is still there")
}
