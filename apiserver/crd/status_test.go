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

	obj := putDefinition(t, st, `{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}`)
	w, err := st.Watch(ctx, Prefix, mustRV(t, obj))
	require.NoError(t, err)
	defer w.Stop()
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
	c.apply(ctx, putDefinition(t, st, `{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}`))
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
	obj := putDefinition(t, st, `{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}`)
	waitEstablished(t, w, obj.Metadata.UID)
	stop()
	assert.True(t, host.failed)
	assert.Equal(t, 1, host.installs)
}
