package apiserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readyzVerbose and livezVerbose are kube-apiserver v1.37.2's answers to
// GET /readyz?verbose and /livez?verbose (/healthz?verbose is livez's with
// "healthz check passed"), from the reference (docs/reference.md).
const readyzVerbose = `[+]ping ok
[+]log ok
[+]etcd ok
[+]etcd-readiness ok
[+]informer-sync ok
[+]poststarthook/start-apiserver-admission-initializer ok
[+]poststarthook/generic-apiserver-start-informers ok
[+]poststarthook/priority-and-fairness-config-consumer ok
[+]poststarthook/priority-and-fairness-filter ok
[+]poststarthook/storage-object-count-tracker-hook ok
[+]poststarthook/start-apiextensions-informers ok
[+]poststarthook/start-apiextensions-controllers ok
[+]poststarthook/crd-informer-synced ok
[+]poststarthook/start-system-namespaces-controller ok
[+]poststarthook/peer-endpoint-reconciler-controller ok
[+]poststarthook/start-cluster-authentication-info-controller ok
[+]poststarthook/start-kube-apiserver-identity-lease-controller ok
[+]poststarthook/start-kube-apiserver-identity-lease-garbage-collector ok
[+]poststarthook/storage-readiness ok
[+]poststarthook/start-legacy-token-tracking-controller ok
[+]poststarthook/start-service-ip-repair-controllers ok
[+]poststarthook/scheduling/bootstrap-system-priority-classes ok
[+]poststarthook/priority-and-fairness-config-producer ok
[+]poststarthook/bootstrap-controller ok
[+]poststarthook/start-kubernetes-service-cidr-controller ok
[+]poststarthook/start-kube-aggregator-informers ok
[+]poststarthook/apiservice-status-local-available-controller ok
[+]poststarthook/apiservice-status-remote-available-controller ok
[+]poststarthook/apiservice-registration-controller ok
[+]poststarthook/apiservice-discovery-controller ok
[+]poststarthook/kube-apiserver-autoregistration ok
[+]autoregister-completion ok
[+]poststarthook/apiservice-openapi-controller ok
[+]poststarthook/apiservice-openapiv3-controller ok
[+]shutdown ok
readyz check passed
`

const livezVerbose = `[+]ping ok
[+]log ok
[+]loopback-serving-certificate ok
[+]etcd ok
[+]poststarthook/start-apiserver-admission-initializer ok
[+]poststarthook/generic-apiserver-start-informers ok
[+]poststarthook/priority-and-fairness-config-consumer ok
[+]poststarthook/priority-and-fairness-filter ok
[+]poststarthook/storage-object-count-tracker-hook ok
[+]poststarthook/start-apiextensions-informers ok
[+]poststarthook/start-apiextensions-controllers ok
[+]poststarthook/crd-informer-synced ok
[+]poststarthook/start-system-namespaces-controller ok
[+]poststarthook/peer-endpoint-reconciler-controller ok
[+]poststarthook/start-cluster-authentication-info-controller ok
[+]poststarthook/start-kube-apiserver-identity-lease-controller ok
[+]poststarthook/start-kube-apiserver-identity-lease-garbage-collector ok
[+]poststarthook/storage-readiness ok
[+]poststarthook/start-legacy-token-tracking-controller ok
[+]poststarthook/start-service-ip-repair-controllers ok
[+]poststarthook/scheduling/bootstrap-system-priority-classes ok
[+]poststarthook/priority-and-fairness-config-producer ok
[+]poststarthook/bootstrap-controller ok
[+]poststarthook/start-kubernetes-service-cidr-controller ok
[+]poststarthook/start-kube-aggregator-informers ok
[+]poststarthook/apiservice-status-local-available-controller ok
[+]poststarthook/apiservice-status-remote-available-controller ok
[+]poststarthook/apiservice-registration-controller ok
[+]poststarthook/apiservice-discovery-controller ok
[+]poststarthook/kube-apiserver-autoregistration ok
[+]autoregister-completion ok
[+]poststarthook/apiservice-openapi-controller ok
[+]poststarthook/apiservice-openapiv3-controller ok
livez check passed
`

// Kubernetes' e2e "health handlers should contain necessary checks"
// (test/e2e/apimachinery/health_handlers.go) GETs each endpoint with
// ?verbose=1 and looks for its required checks among the lines. Ours
// answers with the real server's lines, in its order.
func TestHealthEndpointsListKubeAPIServersChecks(t *testing.T) {
	ts := startServer(t, Config{})
	for path, want := range map[string]string{
		"/readyz?verbose=1":  readyzVerbose,
		"/livez?verbose=1":   livezVerbose,
		"/healthz?verbose=1": strings.Replace(livezVerbose, "livez check passed", "healthz check passed", 1),
	} {
		resp := ts.get(path)
		require.Equal(t, http.StatusOK, resp.code, path)
		assert.Equal(t, "text/plain; charset=utf-8", resp.header.Get("Content-Type"), path)
		assert.Equal(t, "nosniff", resp.header.Get("X-Content-Type-Options"), path)
		assert.Equal(t, want, string(resp.body), path)
	}
	// Without ?verbose: "ok", as before.
	assert.Equal(t, "ok", string(ts.get("/readyz").mustCode(t, http.StatusOK)))
}

// One check alone, an excluded check and an unknown one, as the reference
// answers them.
func TestHealthCheckPaths(t *testing.T) {
	ts := startServer(t, Config{})
	assert.Equal(t, "ok", string(ts.get("/readyz/etcd").mustCode(t, http.StatusOK)))
	assert.Equal(t, "ok", string(ts.get("/livez/poststarthook/crd-informer-synced").mustCode(t, http.StatusOK)))
	assert.Equal(t, "404 page not found\n", string(ts.get("/healthz/nope").mustCode(t, http.StatusNotFound)))
	assert.Equal(t, "404 page not found\n", string(ts.get("/readyz/").mustCode(t, http.StatusNotFound)))

	body := string(ts.get("/readyz?verbose&exclude=etcd&exclude=bogus").mustCode(t, http.StatusOK))
	assert.Contains(t, body, "[+]log ok\n[+]etcd excluded: ok\n[+]etcd-readiness ok\n")
	assert.True(t, strings.HasSuffix(body, "[+]shutdown ok\nwarn: some health checks cannot be excluded: no matches for \"bogus\"\nreadyz check passed\n"), body)
}
