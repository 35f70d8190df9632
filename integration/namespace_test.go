package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/controllers/manager"
	"listwatch/internal/leakcheck"
)

// A deleted namespace goes Terminating, the namespace controller deletes
// what it holds (here a ConfigMap and a Deployment with its Pods), then
// finalizes it, and it is gone: kube-apiserver and kube-controller-manager
// together, played by ours.
func TestNamespaceControllerEmptiesAndRemovesADeletedNamespace(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	ctx := testContext(t)
	createNamespaces(t, c, "team")
	_, err := c.Resource(configMaps).Namespace("team").Create(ctx, configMap("team", "settings", "x"))
	require.NoError(t, err)
	_, err = c.Resource(deploymentsGVR).Namespace("team").Create(ctx, deploymentObj("team", "web", 2, "nginx"))
	require.NoError(t, err)
	startManager(t, srv, manager.Config{})
	waitRolledOut(t, c, "team", "web", 2)

	nsClient := c.Resource(namespacesGVR)
	require.NoError(t, nsClient.Delete(ctx, "team", client.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := nsClient.Get(ctx, "team")
		return client.IsNotFound(err)
	}, waitLong, tick, "the namespace is emptied and finalized")
	for _, gvr := range []api.GroupVersionResource{configMaps, deploymentsGVR, podsGVR} {
		l, err := c.Resource(gvr).Namespace("team").List(ctx, api.ListOptions{})
		require.NoError(t, err)
		assert.Empty(t, l.Items, "%s left in the deleted namespace", gvr.Resource)
	}
}
