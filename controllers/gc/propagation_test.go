package gc

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
)

// An owner deleted with propagationPolicy=Orphan is not finalized while a
// cache has not synced: a dependent still on its way into that cache
// would keep its reference, and be collected once the owner is gone.
func TestOrphaningWaitsForEveryCache(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	var requests atomic.Int32
	srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusNotFound)
	})
	dep := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Namespace: "default", Name: "c", UID: "uid-c", ResourceVersion: "3"}}
	cms := api.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	g, siteInf := newStubCollector(t, srv, cms, "ConfigMap", dep, "w1", "uid-w1")
	now := time.Now()
	require.NoError(t, siteInf.GetIndexer().Add(&api.Object{Metadata: api.ObjectMeta{Namespace: "default", Name: "w1", UID: "uid-w1",
		ResourceVersion: "5", DeletionTimestamp: &now, Extra: []api.Field{{Name: "finalizers", Value: []byte(`["orphan"]`)}}}}))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only turns a hang into a failure
	defer cancel()
	err := g.reconcile(ctx, item{res: 0, key: "default/w1"})
	assert.True(t, errors.Is(err, errCachesNotSynced), "%v", err)
	assert.Zero(t, requests.Load(), "nothing is patched before the caches have synced")
}
