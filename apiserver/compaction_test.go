package apiserver

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With nothing compacting the store, a client that
// keeps reading pages at one old revision is never told to start over.
// The periodic compactor (kube-apiserver's --etcd-compaction-interval)
// makes the old revision go, and the next page is 410 with a fresh token.
func TestPeriodicCompactionExpiresOldPages(t *testing.T) {
	ts := startServer(t, Config{CompactionInterval: 10 * time.Millisecond})
	for _, n := range []string{"a", "b", "c"} {
		ts.createConfigMap("default", n, nil, nil)
	}
	cms := "/api/v1/namespaces/default/configmaps"
	first := ts.get(cms + "?limit=1").list(t)
	require.NotEmpty(t, first.Metadata.Continue)
	listRev, err := strconv.ParseInt(first.Metadata.ResourceVersion, 10, 64)
	require.NoError(t, err)
	ts.createConfigMap("default", "d", nil, nil) // the list's revision is now in the past

	require.Eventually(t, func() bool {
		return ts.Store().CompactedRevision() > listRev
	}, safetyTimeout, 5*time.Millisecond)
	resp := ts.get(cms + "?limit=1&continue=" + url.QueryEscape(first.Metadata.Continue))
	assert.Equal(t, http.StatusGone, resp.code)
	st := resp.status(t)
	assert.NotEmpty(t, st.Metadata.Continue, "a fresh token to continue inconsistently")
}
