package informer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
	"listwatch/reflector"
)

var (
	configmapsGVR = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secretsGVR    = api.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

func TestFactorySharesOneInformerPerResourceAndNamespace(t *testing.T) {
	defer leakcheck.Check(t)()
	servers := map[InformerKey]*fakeServer{}
	f := NewFactory(func(gvr api.GroupVersionResource, ns string) reflector.ListerWatcher {
		s := newFakeServer()
		s.set("default", "a", "")
		servers[InformerKey{gvr, ns}] = s
		return s
	}, 0, Options{})

	cm1, err := f.InformerFor(configmapsGVR, "")
	require.NoError(t, err)
	cm2, err := f.InformerFor(configmapsGVR, "")
	require.NoError(t, err)
	assert.Same(t, cm1, cm2, "one informer per resource, shared")
	cmDefault, err := f.InformerFor(configmapsGVR, "default")
	require.NoError(t, err)
	assert.NotSame(t, cm1, cmDefault, "another namespace is another watch")
	assert.Len(t, servers, 2)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx)
	secrets, err := f.InformerFor(secretsGVR, "")
	require.NoError(t, err)
	assert.False(t, secrets.HasStarted(), "informers asked for after Start wait for the next Start")
	f.Start(ctx)

	wctx, wcancel := context.WithTimeout(ctx, waitTimeout)
	defer wcancel()
	synced := f.WaitForCacheSync(wctx)
	assert.Equal(t, map[InformerKey]bool{
		{configmapsGVR, ""}:        true,
		{configmapsGVR, "default"}: true,
		{secretsGVR, ""}:           true,
	}, synced)
	assert.Equal(t, 1, cm1.GetStore().Len())

	f.Shutdown() // waits for every informer to return; leakcheck proves it
	assert.True(t, cm1.IsStopped())
	assert.True(t, secrets.IsStopped())
	f.Start(ctx) // nothing starts after Shutdown
}

func TestFactoryErrors(t *testing.T) {
	f := NewFactory(func(api.GroupVersionResource, string) reflector.ListerWatcher { return nil }, 0, Options{})
	_, err := f.InformerFor(configmapsGVR, "")
	assert.Error(t, err)
	_, err = NewFactory(nil, 0, Options{}).InformerFor(configmapsGVR, "")
	assert.Error(t, err)
	_, err = NewFactory(func(api.GroupVersionResource, string) reflector.ListerWatcher { return newFakeServer() },
		0, Options{Queue: "nope"}).InformerFor(configmapsGVR, "")
	assert.Error(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, WaitForCacheSync(ctx, newInformer(t, newFakeServer(), Options{})))
}
