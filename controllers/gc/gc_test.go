package gc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/internal/leakcheck"
)

func TestOwnerIndexListsEveryOwnersUID(t *testing.T) {
	o := &api.Object{Metadata: api.ObjectMeta{Name: "p", Extra: []api.Field{{Name: "ownerReferences",
		Value: []byte(`[{"apiVersion":"v1","kind":"ConfigMap","name":"a","uid":"u-a"},{"apiVersion":"apps/v1","kind":"Deployment","name":"b","uid":"u-b"}]`)}}}}
	uids, err := ownerIndexFunc(o)
	require.NoError(t, err)
	assert.Equal(t, []string{"u-a", "u-b"}, uids)

	uids, err = ownerIndexFunc(&api.Object{})
	require.NoError(t, err)
	assert.Empty(t, uids)
}

func TestNewRefusesIncompleteOptions(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	_, err := New(Options{})
	assert.ErrorContains(t, err, "needs Client and Resources")

	c, err := client.New(client.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	cms := api.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	inf, err := informer.NewSharedIndexInformer(c.Resource(cms), informer.Options{})
	require.NoError(t, err)
	g, err := New(Options{Client: c, Resources: []Resource{{GVR: cms, Kind: "ConfigMap", Namespaced: true, Informer: inf}}})
	require.NoError(t, err)
	defer g.queue.ShutDown() // never Run: stop its queue's timer goroutine
	_, err = New(Options{Client: c, Resources: []Resource{{GVR: cms, Kind: "ConfigMap", Namespaced: true, Informer: inf}}})
	assert.ErrorContains(t, err, OwnerIndex, "two collectors on one informer: the index exists")
}
