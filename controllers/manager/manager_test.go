package manager

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/client"
	"listwatch/internal/leakcheck"
)

func TestRunRefusesBadConfigWithoutLeaking(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	ctx := context.Background()
	assert.ErrorContains(t, Run(ctx, Config{}), "needs a Client")

	c, err := client.New(client.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	assert.ErrorContains(t, Run(ctx, Config{Client: c, Controllers: []string{"scheduler"}}), `unknown controller "scheduler"`)

	// The deployment controller is built, then the collector fails (one
	// resource listed twice: its informer gets the owner index twice).
	// The controller already built must not leak its queue.
	// A bug here must not hang the test; the bound is generous so that a
	// busy machine is not mistaken for one.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cms := Kind{GVR: api.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
	err = Run(ctx, Config{Client: c, Controllers: []string{Deployment, GC}, GCKinds: []Kind{cms, cms}})
	assert.ErrorContains(t, err, "byOwnerUID")
}

func TestQueuesListsEveryControllersQueue(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	c, err := client.New(client.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	m, err := New(Config{Client: c})
	require.NoError(t, err)
	var names []string
	for _, q := range m.Queues() {
		names = append(names, q.Name)
		assert.True(t, q.Idle(), "%s: nothing queued yet", q.Name)
	}
	assert.Equal(t, All, names)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m.Run(ctx) // stops the queues' timer goroutines
}
