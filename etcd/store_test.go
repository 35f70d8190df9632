package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/etcd"
	"listwatch/store"
	"listwatch/store/storetest"
)

// The etcd store passes the conformance suite the in-memory store passes.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Interface {
		return newStore(t, etcd.Options{})
	})
}

// With CompactionInterval the store compacts etcd by itself, one interval
// behind the cluster's revision.
func TestPeriodicCompaction(t *testing.T) {
	// A prefix of its own per run, so -count=N finds no key of the last.
	s := newStore(t, etcd.Options{Prefix: fmt.Sprintf("/periodic-%d", time.Now().UnixNano()), CompactionInterval: 50 * time.Millisecond})
	o, err := s.Create(context.Background(), "/registry/configmaps/ns/a", configMap("ns", "a"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.CompactedRevision() >= rvOf(t, o) },
		safetyTimeout, 10*time.Millisecond, "compacted past the create")
	_, err = s.List(context.Background(), "/registry/", store.ListOptions{Revision: rvOf(t, o) - 1})
	require.ErrorIs(t, err, store.ErrCompacted)
}
