package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/chaos"
	"listwatch/etcd"
	"listwatch/etcd/embedded"
)

// The convergence checker of chaos/ (every fault: killed and stalled
// watches, 429s, slow watchers, short watch timeouts, compaction every 2 s,
// here through etcd) against an apiserver on etcd: every informer and
// handler ends with exactly what etcd holds.
func TestChaosCheckerOnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos run skipped in -short mode")
	}
	// A member of its own: the checker records the store's history from
	// revision 0, which the shared member's earlier compactions removed.
	// A safety bound: setup, the write phase and the checker's convergence
	// bound.
	ctx, cancel := context.WithTimeout(context.Background(), chaos.DefaultConvergenceTimeout+3*time.Minute)
	defer cancel()
	member, err := embedded.Start(ctx, embedded.Config{DataDir: t.TempDir(), NoFsync: true, LogLevel: "fatal", ProgressNotifyInterval: time.Second})
	require.NoError(t, err)
	defer member.Close()
	cli, err := embedded.NewClient([]string{member.ClientURL()})
	require.NoError(t, err)
	defer cli.Close()
	st, err := etcd.New(ctx, cli, etcd.Options{})
	require.NoError(t, err)
	defer st.Close()

	seed := uint64(time.Now().UnixNano())
	rep, err := chaos.Run(ctx, chaos.Config{
		Seed: seed, Duration: 5 * time.Second, Writers: 4, Keys: 150, Namespaces: 3, Informers: 5,
		Store: st, Logf: t.Logf,
	})
	t.Logf("report:\n%s", rep)
	require.NoError(t, err, "seed %d", seed)
	assert.Empty(t, rep.Divergences, "seed %d", seed)
	assert.Positive(t, rep.Events, "the writers wrote")
}
