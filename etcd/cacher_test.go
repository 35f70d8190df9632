package etcd_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/etcd"
)

func configMap(ns, name string) *api.Object {
	return &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Namespace: ns, Name: name}}
}

func rvOf(t *testing.T, o *api.Object) int64 {
	t.Helper()
	n, err := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	require.NoError(t, err)
	return n
}

// The watch cache runs on etcd unchanged: one etcd watch per resource feeds
// it, and etcd's progress notifications tell it that the cluster's revision
// moved on without this resource, which is what lets a list "not older than"
// a revision written to another resource answer at once.
func TestWatchCacheOnEtcd(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, etcd.Options{Prefix: "/cachertest-" + strconv.FormatInt(time.Now().UnixNano(), 10)})
	cm, err := s.Create(ctx, "/registry/configmaps/ns/a", configMap("ns", "a"))
	require.NoError(t, err)

	c, err := cacher.New(ctx, cacher.Config{
		Store: s, Prefix: "/registry/configmaps/",
		Resource: api.GroupResource{Resource: "configmaps"}, Kind: "ConfigMap", APIVersion: "v1",
	})
	require.NoError(t, err)
	defer c.Stop()

	objs, rev, err := c.List(ctx, rvOf(t, cm), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, []string{objs[0].Metadata.Name})
	assert.GreaterOrEqual(t, rev, rvOf(t, cm))

	// A write to another resource: no event reaches this cache, only
	// progress.
	other, err := s.Create(ctx, "/registry/secrets/ns/s", configMap("ns", "s"))
	require.NoError(t, err)
	start := time.Now()
	_, rev, err = c.List(ctx, rvOf(t, other), nil)
	require.NoError(t, err, "answered through a progress notification, not a 504")
	assert.GreaterOrEqual(t, rev, rvOf(t, other))
	t.Logf("the cache reached the other resource's revision in %v", time.Since(start))

	// A watch-list with resourceVersion unset is a consistent read: the
	// cacher asks etcd for its current revision and waits to reach it.
	yes := true
	w, err := c.Watch(ctx, cacher.WatchOptions{SendInitialEvents: &yes, AllowBookmarks: true})
	require.NoError(t, err)
	defer w.Stop()
	frames, err := w.Next(ctx, nil)
	require.NoError(t, err)
	var types []api.EventType
	for _, f := range frames {
		var ev api.Event
		require.NoError(t, ev.UnmarshalJSON(f))
		types = append(types, ev.Type)
	}
	assert.Contains(t, types, api.Added)

	// A live change through the same etcd watch.
	b, err := s.Create(ctx, "/registry/configmaps/ns/b", configMap("ns", "b"))
	require.NoError(t, err)
	deadline, cancel := context.WithTimeout(ctx, safetyTimeout)
	defer cancel()
	for {
		frames, err := w.Next(deadline, nil)
		require.NoError(t, err)
		found := false
		for _, f := range frames {
			var ev api.Event
			require.NoError(t, ev.UnmarshalJSON(f))
			if ev.Type == api.Added && ev.Object.Metadata.Name == "b" {
				assert.Equal(t, b.Metadata.ResourceVersion, ev.Object.Metadata.ResourceVersion)
				found = true
			}
		}
		if found {
			break
		}
	}
}
