package target_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/internal/target"
)

// TestOwnAndShared opens a server of its own, then points a second target
// at it as a shared one: the namespace is created on first use, and the
// fault switches work over HTTP as they do in-process.
func TestOwnAndShared(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard only
	defer cancel()
	own, err := target.Open(ctx, target.Flags{}, apiserver.Config{EnableFaults: true}, client.Config{})
	require.NoError(t, err)
	defer own.Close()
	require.False(t, own.Shared())
	require.Equal(t, target.DefaultNamespace, own.Namespace)

	shared, err := target.Open(ctx, target.Flags{Server: own.URL, Namespace: "alice"}, apiserver.Config{}, client.Config{})
	require.NoError(t, err)
	defer shared.Close()
	require.True(t, shared.Shared())
	_, err = own.Client.Resource(target.Namespaces).Get(ctx, "alice")
	require.NoError(t, err, "the namespace was created")
	again, err := target.Open(ctx, target.Flags{Server: own.URL, Namespace: "alice"}, apiserver.Config{}, client.Config{})
	require.NoError(t, err, "an existing namespace is fine")
	again.Close()

	killed, err := shared.Faults().KillWatchConnections(ctx)
	require.NoError(t, err)
	require.Zero(t, killed)
	rev, err := shared.Faults().CompactNow(ctx)
	require.NoError(t, err)
	require.Positive(t, rev)
	require.NoError(t, shared.Faults().SetWatchTimeout(ctx, 0))
}

// TestSharedWithoutFaults names the flag a shared server lacks.
func TestSharedWithoutFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard only
	defer cancel()
	own, err := target.Open(ctx, target.Flags{}, apiserver.Config{}, client.Config{})
	require.NoError(t, err)
	defer own.Close()
	shared, err := target.Open(ctx, target.Flags{Server: own.URL}, apiserver.Config{}, client.Config{})
	require.NoError(t, err)
	_, err = shared.Faults().KillWatchConnections(ctx)
	require.ErrorContains(t, err, "--enable-faults")
}
