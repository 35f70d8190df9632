package crd

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/registry"
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

func definitionObject(t *testing.T, spec string) *api.Object {
	t.Helper()
	o := &api.Object{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition",
		Metadata: api.ObjectMeta{Name: "widgets.example.com", UID: "u1"}}
	require.NoError(t, o.Set("spec", json.RawMessage(spec)))
	return o
}

// A definition written again with the same spec, in another order, is no
// change: the resource keeps being served as it was (an Update would give
// it new watch caches and end its watches). A change of the spec is one.
func TestControllerUpdatesOnlyOnAChangedSpec(t *testing.T) {
	host := &countingHost{}
	c := NewController(nil, host, nil)
	ctx := t.Context()
	const version = `{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}`
	c.apply(ctx, definitionObject(t, `{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[`+version+`]}`))
	c.apply(ctx, definitionObject(t, `{"versions":[`+version+`],"names":{"kind":"Widget","plural":"widgets"},"scope":"Cluster","group":"example.com"}`))
	assert.Equal(t, countingHost{installs: 1}, *host)
	c.apply(ctx, definitionObject(t, `{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget","shortNames":["w"]},"versions":[`+version+`]}`))
	assert.Equal(t, countingHost{installs: 1, updates: 1}, *host)
}
