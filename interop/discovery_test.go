package interop_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	"listwatch/internal/leakcheck"
)

// TestClientGoAggregatedDiscovery: client-go's discovery reads /api and
// /apis as aggregated documents (GroupsAndMaybeResources returns the
// resources only when the server answered with them), a custom resource
// appears there once its definition is created and is gone once it is
// deleted, and the RESTMapper controllers build from discovery maps its
// kind to its resource.
func TestClientGoAggregatedDiscovery(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(srv.restConfig())
	require.NoError(t, err)
	agg, ok := any(dc).(discovery.AggregatedDiscoveryInterface)
	require.True(t, ok)
	_, byGV, _, err := agg.GroupsAndMaybeResources()
	require.NoError(t, err)
	require.NotNil(t, byGV, "the server answered with aggregated discovery")
	assert.Contains(t, byGV, schema.GroupVersion{Version: "v1"})
	assert.Contains(t, byGV, schema.GroupVersion{Group: "apps", Version: "v1"})

	code, _, body := rawDo(t, http.MethodPost, srv.url, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", nil, "application/json", []byte(gadgetsCRD))
	require.Equal(t, http.StatusCreated, code, "%s", body)
	gv := schema.GroupVersion{Group: "interop.example.com", Version: "v1"}
	require.Eventually(t, func() bool {
		_, byGV, _, err := agg.GroupsAndMaybeResources()
		return err == nil && byGV[gv] != nil
	}, safetyTimeout, 10*time.Millisecond, "the custom resource appears in aggregated discovery")
	_, byGV, _, err = agg.GroupsAndMaybeResources()
	require.NoError(t, err)
	var names []string
	for _, r := range byGV[gv].APIResources {
		names = append(names, r.Name+" "+r.Kind+" "+strings.Join(r.ShortNames, ","))
	}
	assert.Equal(t, []string{"gadgets Gadget gd"}, names)

	groups, err := restmapper.GetAPIGroupResources(dc)
	require.NoError(t, err)
	mapping, err := restmapper.NewDiscoveryRESTMapper(groups).RESTMapping(schema.GroupKind{Group: "interop.example.com", Kind: "Gadget"}, "v1")
	require.NoError(t, err)
	assert.Equal(t, gadgets, mapping.Resource)

	code, _, body = rawDo(t, http.MethodDelete, srv.url, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.interop.example.com", nil, "", nil)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Eventually(t, func() bool {
		_, byGV, _, err := agg.GroupsAndMaybeResources()
		return err == nil && byGV[gv] == nil
	}, safetyTimeout, 10*time.Millisecond, "the custom resource leaves aggregated discovery with its definition")
}
