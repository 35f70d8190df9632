package crd

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/store"
)

// countingHost counts what the controller asks of the server.
type countingHost struct{ installs, updates, uninstalls int }

func (h *countingHost) Install(context.Context, []*registry.Resource) error {
	h.installs++
	return nil
}

func (h *countingHost) Update(context.Context, []*registry.Resource) error {
	h.updates++
	return nil
}

func (h *countingHost) Uninstall(context.Context, api.GroupResource) error {
	h.uninstalls++
	return nil
}

// putDefinition stores the definition widgets.example.com with spec,
// keeping its status, and returns it as stored.
func putDefinition(t *testing.T, st store.Interface, spec string) *api.Object {
	t.Helper()
	key := Prefix + "widgets.example.com"
	obj, err := st.GuaranteedUpdate(t.Context(), key, func(cur *api.Object) (*api.Object, error) {
		next := cur.DeepCopy()
		return next, next.Set("spec", json.RawMessage(spec))
	})
	if errors.Is(err, store.ErrNotFound) {
		o := &api.Object{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition",
			Metadata: api.ObjectMeta{Name: "widgets.example.com"}}
		require.NoError(t, o.Set("spec", json.RawMessage(spec)))
		obj, err = st.Create(t.Context(), key, o)
	}
	require.NoError(t, err)
	return obj
}

// A definition written again with the same spec, in another order, is no
// change: the resource keeps being served as it was (an Update would give
// it new watch caches and end its watches). A change of the spec is one.
func TestControllerUpdatesOnlyOnAChangedSpec(t *testing.T) {
	st := store.New(store.Options{})
	t.Cleanup(st.Close)
	host := &countingHost{}
	c := NewController(st, host, nil)
	ctx := t.Context()
	const version = `{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}`
	c.apply(ctx, putDefinition(t, st, `{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[`+version+`]}`))
	c.apply(ctx, putDefinition(t, st, `{"versions":[`+version+`],"names":{"kind":"Widget","plural":"widgets"},"scope":"Cluster","group":"example.com"}`))
	assert.Equal(t, countingHost{installs: 1}, *host)
	c.apply(ctx, putDefinition(t, st, `{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget","shortNames":["w"]},"versions":[`+version+`]}`))
	assert.Equal(t, countingHost{installs: 1, updates: 1}, *host)

	// New names are accepted by the Controller, and the definition stays
	// established (kube-apiserver's naming controller keeps an Established
	// that is True).
	assert.JSONEq(t, `{"plural":"widgets","singular":"widget","shortNames":["w"],"kind":"Widget","listKind":"WidgetList"}`, acceptedNamesOf(t, st))
	obj, err := st.Get(ctx, Prefix+"widgets.example.com")
	require.NoError(t, err)
	assert.True(t, conditionTrue(obj, condNamesAccepted))
	assert.True(t, conditionTrue(obj, condEstablished))
}
