package gc

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/informer"
)

// websites is the owner kind of the stub-server tests: the operator's custom
// resource.
var websites = api.GroupVersionResource{Group: "workshop.example.com", Version: "v1", Resource: "websites"}

// newStubCollector builds a collector of Websites and of one dependent kind
// over a stub API server, never run (the test calls reconcile itself), and
// puts dep in the dependents' cache owned by Website owner (uid ownerUID).
// It returns the collector and the Websites' informer, whose cache the test
// may fill.
func newStubCollector(t *testing.T, srv http.Handler, depGVR api.GroupVersionResource, depKind string, dep *api.Object, owner string, ownerUID string) (*Collector, *informer.SharedIndexInformer) {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := client.New(client.Config{Host: hs.URL})
	require.NoError(t, err)
	siteInf, err := informer.NewSharedIndexInformer(c.Resource(websites), informer.Options{})
	require.NoError(t, err)
	depInf, err := informer.NewSharedIndexInformer(c.Resource(depGVR), informer.Options{})
	require.NoError(t, err)
	g, err := New(Options{Client: c, Resources: []Resource{
		{GVR: websites, Kind: "Website", Namespaced: true, Informer: siteInf},
		{GVR: depGVR, Kind: depKind, Namespaced: true, Informer: depInf},
	}})
	require.NoError(t, err)
	t.Cleanup(g.queue.ShutDown) // never Run: stop its queue's timer goroutine
	yes := true
	require.NoError(t, controllers.SetOwnerReferences(dep, []controllers.OwnerReference{
		{APIVersion: "workshop.example.com/v1", Kind: "Website", Name: owner, UID: ownerUID, Controller: &yes}}))
	require.NoError(t, depInf.GetIndexer().Add(dep))
	return g, siteInf
}
