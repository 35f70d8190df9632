package crd

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/internal/leakcheck"
	"listwatch/store"
)

// widgetsSpec is a definition's spec: cluster-scoped widgets, one version.
const widgetsSpec = `{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}`

// peekingHost records the definition's conditions as stored when the
// controller asks it to install the resource.
type peekingHost struct {
	countingHost
	st        store.Interface
	atInstall []condition
}

func (h *peekingHost) Install(ctx context.Context, versions []*registry.Resource) error {
	obj, err := h.st.Get(ctx, Prefix+"widgets.example.com")
	if err != nil {
		return err
	}
	h.atInstall = conditionsOf(obj)
	return h.countingHost.Install(ctx, versions)
}

func conditionsOf(obj *api.Object) []condition {
	conds := definitionConditions(obj)
	for i := range conds {
		conds[i].LastTransitionTime = "" // not compared
	}
	return conds
}

// A new definition is written without conditions, gets its names
// accepted (Established False, Installing), and is established only once
// its resource is installed, each step one status write as kube-apiserver
// 1.37.2's naming and establishing controllers make them.
func TestControllerEstablishesOnlyOnceInstalled(t *testing.T) {
	st := store.New(store.Options{})
	t.Cleanup(st.Close)
	host := &peekingHost{st: st}
	c := NewController(st, host, nil)
	ctx := safetyContext(t)

	obj := putDefinition(t, st, widgetsSpec)
	w := watchAfter(ctx, t, st, obj)
	c.apply(ctx, obj)

	accepted := condition{Type: condNamesAccepted, Status: "True", Reason: "NoConflicts", Message: "no conflicts found"}
	installing := condition{Type: condEstablished, Status: "False", Reason: "Installing", Message: "the initial names have been accepted"}
	established := condition{Type: condEstablished, Status: "True", Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"}
	assert.Equal(t, []condition{accepted, installing}, host.atInstall, "conditions while the resource was being installed")
	assert.Equal(t, 1, host.installs)
	for _, want := range [][]condition{{accepted, installing}, {accepted, established}} {
		ev, ok := <-w.Events()
		require.True(t, ok, "the watch ended: %v", w.Err())
		require.Equal(t, api.Modified, ev.Type)
		assert.Equal(t, want, conditionsOf(ev.Object))
	}
	assert.JSONEq(t, `{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"}`,
		acceptedNamesOf(t, st))

	// Seen again (its own writes come back on the watch): nothing to do.
	c.apply(ctx, putDefinition(t, st, widgetsSpec))
	assert.Equal(t, 1, host.installs)
}

func acceptedNamesOf(t *testing.T, st store.Interface) string {
	t.Helper()
	obj, err := st.Get(t.Context(), Prefix+"widgets.example.com")
	require.NoError(t, err)
	var status map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj.Get("status"), &status))
	return string(status["acceptedNames"])
}

// watchAfter watches the definitions from just after obj was written; the
// watch stops with the test.
func watchAfter(ctx context.Context, t *testing.T, st store.Interface, obj *api.Object) store.Watcher {
	t.Helper()
	w, err := st.Watch(ctx, Prefix, mustRV(t, obj))
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	return w
}

func mustRV(t *testing.T, obj *api.Object) int64 {
	t.Helper()
	rv, err := strconv.ParseInt(obj.Metadata.ResourceVersion, 10, 64)
	require.NoError(t, err)
	return rv
}

// failOnceHost fails its first Install, as a server whose watch cache
// could not start would.
type failOnceHost struct {
	countingHost
	failed bool
}

func (h *failOnceHost) Install(ctx context.Context, versions []*registry.Resource) error {
	if !h.failed {
		h.failed = true
		return errors.New("injected: install failed")
	}
	return h.countingHost.Install(ctx, versions)
}

// A definition whose resource could not be installed is tried again, and
// established once it is.
func TestControllerRetriesAFailedInstall(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	st := store.New(store.Options{})
	t.Cleanup(st.Close)
	host := &failOnceHost{}
	c := NewController(st, host, nil)
	ctx := safetyContext(t)
	from, err := c.Sync(ctx)
	require.NoError(t, err)
	stop := run(ctx, c, from)
	defer stop()

	w, err := st.Watch(ctx, Prefix, from)
	require.NoError(t, err)
	defer w.Stop()
	obj := putDefinition(t, st, widgetsSpec)
	waitEstablished(t, w, obj.Metadata.UID)
	stop()
	assert.True(t, host.failed)
	assert.Equal(t, 1, host.installs)
}

// The Controller's own first status write comes back on its watch after
// a client may have written the status again: applying it late writes
// nothing, since the definition as it is now has no names accepted left
// to establish (kube-apiserver's establishing controller reads its lister,
// not the event). Under load this wrote Established back over a client's
// conditions, in TestCustomResourceDefinitionStatusSubresource.
func TestControllerIgnoresItsOwnLateEvent(t *testing.T) {
	st := store.New(store.Options{})
	t.Cleanup(st.Close)
	c := NewController(st, &countingHost{}, nil)
	ctx := safetyContext(t)
	obj := putDefinition(t, st, widgetsSpec)
	w := watchAfter(ctx, t, st, obj)
	c.apply(ctx, obj)
	late := <-w.Events() // names accepted, Established False
	require.False(t, conditionTrue(late.Object, condEstablished))

	// A client replaces the conditions, as a JSON patch of /status may.
	written, err := st.GuaranteedUpdate(ctx, Prefix+"widgets.example.com", func(cur *api.Object) (*api.Object, error) {
		next := cur.DeepCopy()
		var status map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(cur.Get("status"), &status))
		status["conditions"] = json.RawMessage(`[{"message":"patched"}]`)
		raw, err := json.Marshal(status)
		require.NoError(t, err)
		return next, next.Set("status", raw)
	})
	require.NoError(t, err)

	c.apply(ctx, late.Object)
	now, err := st.Get(ctx, Prefix+"widgets.example.com")
	require.NoError(t, err)
	assert.Equal(t, written.Metadata.ResourceVersion, now.Metadata.ResourceVersion, "the late event was written over the client's status")
	assert.JSONEq(t, `[{"message":"patched"}]`, string(mustField(t, now.Get("status"), "conditions")))
}

func mustField(t *testing.T, obj json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj, &m))
	return m[name]
}
