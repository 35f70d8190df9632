package integration

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/manager"
	"listwatch/internal/leakcheck"
)

// finalizersOf returns obj's metadata.finalizers.
func finalizersOf(t *testing.T, obj *api.Object) []string {
	t.Helper()
	var out []string
	for _, f := range obj.Metadata.Extra {
		if f.Name == "finalizers" {
			require.NoError(t, json.Unmarshal(f.Value, &out))
		}
	}
	return out
}

// ownedConfigMap creates ConfigMap name owned by owners; block sets
// blockOwnerDeletion on its references, finalizers are its own.
func ownedConfigMap(t *testing.T, cms *client.ResourceClient, name string, block bool, finalizers []string, owners ...*api.Object) {
	t.Helper()
	o := configMap("default", name, "dep")
	var refs []controllers.OwnerReference
	for _, ow := range owners {
		ref := controllers.OwnerReference{APIVersion: "v1", Kind: ow.Kind, Name: ow.Metadata.Name, UID: ow.Metadata.UID}
		if block {
			yes := true
			ref.BlockOwnerDeletion = &yes
		}
		refs = append(refs, ref)
	}
	require.NoError(t, controllers.SetOwnerReferences(o, refs))
	if len(finalizers) > 0 {
		raw, err := json.Marshal(finalizers)
		require.NoError(t, err)
		o.Metadata.Extra = append(o.Metadata.Extra, api.Field{Name: "finalizers", Value: raw})
	}
	_, err := cms.Create(testContext(t), o)
	require.NoError(t, err)
}

// A DELETE with propagationPolicy=Orphan leaves the owner marked, with the
// "orphan" finalizer; the garbage collector removes the owner's references
// from its dependents, then the finalizer, and the owner goes while its
// dependents stay (Kubernetes' e2e "should orphan RS created by deployment
// when deleteOptions.PropagationPolicy is Orphan").
func TestGarbageCollectorOrphansDependents(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	ctx := testContext(t)
	cms := c.Resource(configMaps).Namespace("default")

	owner, err := cms.Create(ctx, configMap("default", "owner", "x"))
	require.NoError(t, err)
	other, err := cms.Create(ctx, configMap("default", "other", "x"))
	require.NoError(t, err)
	owner.Kind, other.Kind = "ConfigMap", "ConfigMap"
	ownedConfigMap(t, cms, "only", true, nil, owner)
	ownedConfigMap(t, cms, "shared", false, nil, owner, other)

	// No collector yet: the owner waits with its finalizer.
	require.NoError(t, cms.Delete(ctx, "owner", client.DeleteOptions{PropagationPolicy: "Orphan"}))
	marked, err := cms.Get(ctx, "owner")
	require.NoError(t, err)
	assert.NotNil(t, marked.Metadata.DeletionTimestamp)
	assert.Equal(t, []string{"orphan"}, finalizersOf(t, marked))

	startManager(t, srv, manager.Config{Controllers: []string{manager.GC}})
	require.Eventually(t, func() bool {
		_, err := cms.Get(ctx, "owner")
		return client.IsNotFound(err)
	}, waitLong, tick, "the owner goes once its dependents are orphaned")
	only, err := cms.Get(ctx, "only")
	require.NoError(t, err, "an orphaned dependent stays")
	refs, err := controllers.OwnerReferences(only)
	require.NoError(t, err)
	assert.Empty(t, refs)
	shared, err := cms.Get(ctx, "shared")
	require.NoError(t, err)
	refs, err = controllers.OwnerReferences(shared)
	require.NoError(t, err)
	require.Len(t, refs, 1)
	assert.Equal(t, other.Metadata.UID, refs[0].UID, "only the reference to the deleted owner goes")
}

// A DELETE with propagationPolicy=Foreground leaves the owner marked, with
// the "foregroundDeletion" finalizer, until every dependent that blocks
// its deletion is gone; the garbage collector deletes them all.
func TestGarbageCollectorDeletesDependentsInForeground(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	ctx := testContext(t)
	cms := c.Resource(configMaps).Namespace("default")

	owner, err := cms.Create(ctx, configMap("default", "owner", "x"))
	require.NoError(t, err)
	owner.Kind = "ConfigMap"
	// blocker blocks its owner's deletion and waits for a finalizer of
	// its own, which only the test removes.
	ownedConfigMap(t, cms, "blocker", true, []string{"example.com/hold"}, owner)
	ownedConfigMap(t, cms, "plain", false, nil, owner)

	startManager(t, srv, manager.Config{Controllers: []string{manager.GC}})
	require.NoError(t, cms.Delete(ctx, "owner", client.DeleteOptions{PropagationPolicy: "Foreground"}))
	require.Eventually(t, func() bool {
		b, err := cms.Get(ctx, "blocker")
		return err == nil && b.Metadata.DeletionTimestamp != nil
	}, waitLong, tick, "the blocking dependent is deleted first")
	require.Eventually(t, func() bool {
		_, err := cms.Get(ctx, "plain")
		return client.IsNotFound(err)
	}, waitLong, tick, "every dependent is deleted")
	waiting, err := cms.Get(ctx, "owner")
	require.NoError(t, err, "the owner waits for its blocking dependent")
	assert.Equal(t, []string{"foregroundDeletion"}, finalizersOf(t, waiting))

	_, err = cms.Patch(ctx, "blocker", client.PatchTypeMerge, []byte(`{"metadata":{"finalizers":null}}`))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := cms.Get(ctx, "owner")
		return client.IsNotFound(err)
	}, waitLong, tick, "the owner goes once its blocking dependent has")
}

// With GCWatchAll the collector watches what the server serves beyond its
// configured kinds, as kube-controller-manager's does: Secrets here, which
// DefaultGCKinds leaves out, are collected and orphaned too.
func TestGarbageCollectorWatchesEveryServedResource(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	ctx := testContext(t)
	secrets := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("default")
	mk := func(name string, owner *api.Object) *api.Object {
		o := &api.Object{APIVersion: "v1", Kind: "Secret", Metadata: api.ObjectMeta{Namespace: "default", Name: name}}
		if owner != nil {
			require.NoError(t, controllers.SetOwnerReferences(o, []controllers.OwnerReference{
				{APIVersion: "v1", Kind: "Secret", Name: owner.Metadata.Name, UID: owner.Metadata.UID}}))
		}
		created, err := secrets.Create(ctx, o)
		require.NoError(t, err)
		created.Kind = "Secret"
		return created
	}
	cascading := mk("cascading", nil)
	mk("cascaded", cascading)
	orphaning := mk("orphaning", nil)
	mk("orphaned", orphaning)

	startManager(t, srv, manager.Config{Controllers: []string{manager.GC}, GCWatchAll: true})
	require.NoError(t, secrets.Delete(ctx, "cascading", client.DeleteOptions{}))
	require.NoError(t, secrets.Delete(ctx, "orphaning", client.DeleteOptions{PropagationPolicy: "Orphan"}))
	for _, name := range []string{"cascaded", "orphaning"} {
		require.Eventually(t, func() bool {
			_, err := secrets.Get(ctx, name)
			return client.IsNotFound(err)
		}, waitLong, tick, "%s is gone", name)
	}
	orphaned, err := secrets.Get(ctx, "orphaned")
	require.NoError(t, err)
	refs, err := controllers.OwnerReferences(orphaned)
	require.NoError(t, err)
	assert.Empty(t, refs)
	assert.False(t, slices.Contains(finalizersOf(t, orphaned), "orphan"))
}
