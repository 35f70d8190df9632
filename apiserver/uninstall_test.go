package apiserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/store"
)

// An Uninstall that fails part-way (here its context ended before the
// first object was deleted) leaves the resource unserved and its objects
// to the next Uninstall of it, which the definitions' controller makes
// when it tries again: none is left behind in the store, where a later
// definition of the same name would find them again.
func TestUninstallTriedAgainDeletesWhatWasLeft(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, cronTabsCRD, "stable.example.com/v1")
	for _, n := range []string{"a", "b"} {
		ts.do(req{method: "POST", path: crontabs, body: cronTab(n, `{"cronSpec":"* * * * */5"}`)}).mustCode(t, http.StatusCreated)
	}
	gr := api.GroupResource{Group: "stable.example.com", Resource: "crontabs"}
	var res *registry.Resource
	for _, e := range ts.registry.Entries() {
		if e.GroupResource() == gr {
			res = e.Resource
		}
	}
	require.NotNil(t, res)
	stored := func() int {
		l, err := ts.store.List(context.Background(), res.Prefix(), store.ListOptions{})
		require.NoError(t, err)
		return len(l.Items)
	}

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, ts.Uninstall(ended, gr), context.Canceled)
	ts.get(crontabs).mustCode(t, http.StatusNotFound)
	assert.Equal(t, 2, stored(), "the failed Uninstall deleted objects after all")

	require.NoError(t, ts.Uninstall(context.Background(), gr))
	assert.Equal(t, 0, stored(), "objects left in the store")
	require.NoError(t, ts.Uninstall(context.Background(), gr), "a third Uninstall has nothing to do")
}
