package apiserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// The requests of Kubernetes' e2e "Server request timeout" specs
// (test/e2e/apimachinery/request_timeout.go): GET /version with a
// ?timeout= that is no duration is 400 BadRequest, checked before
// authentication as kube-apiserver's WithRequestDeadline does; one over the
// maximum ("3m") or "0s" is served. A watch is never checked.
func TestTimeoutParameter(t *testing.T) {
	ts := startServer(t, Config{Token: "s3cret"})
	bearer := map[string]string{"Authorization": "Bearer s3cret"}

	resp := ts.do(req{path: "/version?timeout=invalid"}) // no token: the check comes first
	require.Equal(t, http.StatusBadRequest, resp.code, "%s", resp.body)
	st := resp.status(t)
	assert.Equal(t, api.ReasonBadRequest, st.Reason)
	assert.Equal(t, `invalid timeout specified in the request URL - time: invalid duration "invalid"`, st.Message)
	resp = ts.do(req{path: "/api/v1/namespaces/default/configmaps?timeout=10", header: bearer})
	require.Equal(t, http.StatusBadRequest, resp.code, "%s", resp.body)
	assert.Equal(t, `invalid timeout specified in the request URL - time: missing unit in duration "10"`, resp.status(t).Message)

	ts.do(req{path: "/version?timeout=3m"}).mustCode(t, http.StatusUnauthorized)
	ts.do(req{path: "/version?timeout=3m", header: bearer}).mustCode(t, http.StatusOK)
	ts.do(req{path: "/version?timeout=0s", header: bearer}).mustCode(t, http.StatusOK)
	// The live page is ours: its ?timeout= is its watch timeout in seconds.
	ts.do(req{path: "/ui/?timeout=2", header: bearer}).mustCode(t, http.StatusOK)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL()+"/api/v1/namespaces/default/configmaps?watch=1&timeout=invalid", nil)
	require.NoError(t, err)
	hr.Header.Set("Authorization", "Bearer s3cret")
	watch, err := ts.client.Do(hr)
	require.NoError(t, err)
	defer watch.Body.Close()
	assert.Equal(t, http.StatusOK, watch.StatusCode, "a watch is long-running: its ?timeout= is not checked")
}
