package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/controllers/leaderelection"
	"listwatch/controllers/manager"
	"listwatch/internal/leakcheck"
)

// Two controller managers side by side, as in a highly available control
// plane: one leads and runs the controllers, the other waits; when the
// leader dies without a word (its context ends, the Lease is not
// released), the other takes the Lease over once it has expired and the
// Deployments keep being served.
func TestTwoManagersOneLeaderAndATakeOver(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	ctx := testContext(t)
	// Short leases so the take-over is quick; they change nothing else.
	le := manager.LeaderElection{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond}
	type running struct {
		m      *manager.Manager
		cancel context.CancelFunc
		done   chan error
	}
	start := func(id string) *running {
		cfg := manager.Config{Client: newClient(t, srv, client.Config{}), KubeletStartDelay: 20 * time.Millisecond}
		l := le
		l.Identity = id
		cfg.LeaderElection = &l
		m, err := manager.New(cfg)
		require.NoError(t, err)
		rctx, cancel := context.WithCancel(context.Background())
		r := &running{m: m, cancel: cancel, done: make(chan error, 1)}
		go func() { r.done <- m.Run(rctx) }()
		t.Cleanup(func() { cancel(); <-r.done })
		return r
	}
	a, b := start("manager-a"), start("manager-b")
	var leader, follower *running
	require.Eventually(t, func() bool {
		switch {
		case a.m.IsLeader() && !b.m.IsLeader():
			leader, follower = a, b
		case b.m.IsLeader() && !a.m.IsLeader():
			leader, follower = b, a
		}
		return leader != nil
	}, waitLong, tick, "one of the two leads")

	_, err := c.Resource(deploymentsGVR).Namespace("default").Create(ctx, deploymentObj("default", "web", 2, "nginx"))
	require.NoError(t, err)
	waitRolledOut(t, c, "default", "web", 2)
	assert.False(t, follower.m.IsLeader(), "the follower never ran its controllers meanwhile")

	lease, err := c.Resource(leaderelection.Leases).Namespace(manager.DefaultLeaseNamespace).Get(ctx, manager.DefaultLeaseName)
	require.NoError(t, err)
	var spec struct {
		HolderIdentity string `json:"holderIdentity"`
		Transitions    int    `json:"leaseTransitions"`
	}
	require.NoError(t, json.Unmarshal(lease.Get("spec"), &spec))
	killed := spec.HolderIdentity
	assert.Contains(t, []string{"manager-a", "manager-b"}, killed)

	leader.cancel() // dies without releasing the Lease
	require.NoError(t, <-leader.done)
	leader.done <- nil // for the cleanup
	require.Eventually(t, follower.m.IsLeader, waitLong, tick, "the follower takes over once the lease has expired")

	_, err = c.Resource(deploymentsGVR).Namespace("default").Patch(ctx, "web", client.PatchTypeMerge, []byte(`{"spec":{"replicas":3}}`))
	require.NoError(t, err)
	waitRolledOut(t, c, "default", "web", 3)
	lease, err = c.Resource(leaderelection.Leases).Namespace(manager.DefaultLeaseNamespace).Get(ctx, manager.DefaultLeaseName)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(lease.Get("spec"), &spec))
	assert.NotEqual(t, killed, spec.HolderIdentity)
	assert.Positive(t, spec.Transitions, "the lease changed hands")
}
