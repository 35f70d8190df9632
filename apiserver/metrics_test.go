package apiserver

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrape reads /metrics with the Prometheus text parser.
func (ts *testServer) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp := ts.get("/metrics")
	body := resp.mustCode(t, http.StatusOK)
	assert.Contains(t, resp.header.Get("Content-Type"), "text/plain")
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err, "%s", body)
	return families
}

// sample finds the sample of family name whose labels include want; ok
// is false if there is none.
func sample(families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := families[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func mustSample(t *testing.T, families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	v, ok := sample(families, name, want)
	require.True(t, ok, "no %s%v in /metrics", name, want)
	return v
}

// /metrics serves kube-apiserver's series, with its names and labels, for
// what the server did: requests by verb and code, the open watch as a
// long-running request, the events written to it, the watch cache's
// counters and the objects it holds.
func TestMetrics(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("metrics")
	wc := ts.watch(chunked, "/api/v1/namespaces/metrics/configmaps?watch=1")
	ts.createConfigMap("metrics", "one", nil, map[string]string{"k": "v"})
	ts.createConfigMap("metrics", "two", nil, map[string]string{"k": "v"})
	for range 2 {
		wc.next() // both ADDED events were written to the watch
	}
	ts.get("/api/v1/namespaces/metrics/configmaps").mustCode(t, http.StatusOK)
	// apiserver_resource_objects counts what each watch cache holds, and
	// the namespaces cache is fed asynchronously: a list not older than
	// the store's revision waits until it has the namespace created above
	// (k8s.io/apiserver v0.37.2 pkg/storage/cacher/watch_cache.go,
	// waitUntilFreshLocked).
	ts.get("/api/v1/namespaces?resourceVersion="+strconv.FormatInt(ts.revision(), 10)).mustCode(t, http.StatusOK)
	ts.get("/api/v1/namespaces/metrics/configmaps/one").mustCode(t, http.StatusOK)
	ts.get("/api/v1/namespaces/metrics/configmaps/none").mustCode(t, http.StatusNotFound)

	cm := func(verb, scope, code string) map[string]string {
		l := map[string]string{"verb": verb, "group": "", "version": "v1", "resource": "configmaps", "subresource": "",
			"scope": scope, "component": "apiserver", "dry_run": ""}
		if code != "" {
			l["code"] = code
		}
		return l
	}
	// A request is counted as it ends, just after its answer was sent:
	// the scrape waits until the last one is in.
	var m map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		m = ts.scrape(t)
		post, _ := sample(m, "apiserver_request_total", cm("POST", "resource", "201"))
		notFound, _ := sample(m, "apiserver_request_total", cm("GET", "resource", "404"))
		return post == 2 && notFound == 1
	}, safetyTimeout, 10*time.Millisecond)
	assert.Equal(t, 1.0, mustSample(t, m, "apiserver_request_total", cm("LIST", "namespace", "200")))
	assert.Equal(t, 1.0, mustSample(t, m, "apiserver_request_total", cm("GET", "resource", "200")))
	assert.Equal(t, 2.0, mustSample(t, m, "apiserver_request_duration_seconds", cm("POST", "resource", "")))
	watch := cm("WATCH", "namespace", "")
	delete(watch, "dry_run")
	assert.Equal(t, 1.0, mustSample(t, m, "apiserver_longrunning_requests", watch), "the open watch")
	gvr := map[string]string{"group": "", "version": "v1", "resource": "configmaps"}
	assert.GreaterOrEqual(t, mustSample(t, m, "apiserver_watch_events_total", gvr), 2.0)
	gr := map[string]string{"group": "", "resource": "configmaps"}
	assert.GreaterOrEqual(t, mustSample(t, m, "apiserver_watch_cache_events_received_total", gr), 2.0)
	assert.GreaterOrEqual(t, mustSample(t, m, "apiserver_watch_cache_events_dispatched_total", gr), 2.0)
	assert.Equal(t, 1.0, mustSample(t, m, "apiserver_watch_cache_initializations_total", gr))
	assert.Equal(t, 0.0, mustSample(t, m, "apiserver_terminated_watchers_total", gr))
	assert.Positive(t, mustSample(t, m, "watch_cache_capacity", gr))
	assert.Equal(t, float64(ts.revision()%1e15), mustSample(t, m, "apiserver_watch_cache_resource_version", gr))
	assert.Equal(t, 2.0, mustSample(t, m, "apiserver_resource_objects", gr))
	assert.GreaterOrEqual(t, mustSample(t, m, "apiserver_resource_objects", map[string]string{"group": "", "resource": "namespaces"}), 3.0)
	mustSample(t, m, "apiserver_current_inflight_requests", map[string]string{"request_kind": "readOnly"})
	mustSample(t, m, "apiserver_current_inflight_requests", map[string]string{"request_kind": "mutating"})
	mustSample(t, m, "go_goroutines", nil)
	mustSample(t, m, "process_start_time_seconds", nil)

	// The watch ends: it is counted as a request, and is long-running no more.
	wc.close()
	require.Eventually(t, func() bool {
		m := ts.scrape(t)
		open, _ := sample(m, "apiserver_longrunning_requests", watch)
		ended, _ := sample(m, "apiserver_request_total", cm("WATCH", "namespace", "200"))
		return open == 0 && ended == 1
	}, safetyTimeout, 10*time.Millisecond, "the ended watch is no longer long-running, and counted once")
}

// kubectl get --raw /metrics prints the text format.
func TestKubectlGetRawMetrics(t *testing.T) {
	ts := startServer(t, Config{})
	out := newKubectl(t, ts).run("get", "--raw", "/metrics")
	assert.Contains(t, out, "# TYPE apiserver_watch_events_total counter")
	assert.Contains(t, out, `apiserver_watch_cache_resource_version{group="",resource="configmaps"}`)
}

// Every apiserver family we serve is one the real kube-apiserver 1.37.2
// serves, with the same help, type and label names (v137-metrics.txt.gz,
// a scrape of the real server).
func TestMetricsAreKubeAPIServers(t *testing.T) {
	zr, err := gzip.NewReader(bytes.NewReader(fixture(t, "v137-metrics.txt.gz")))
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.UTF8Validation)
	real, err := p.TextToMetricFamilies(zr)
	require.NoError(t, err)

	ts := startServer(t, Config{})
	ts.createConfigMap("default", "one", nil, nil)
	wc := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	wc.next()
	ts.get("/readyz").mustCode(t, http.StatusOK)
	ts.get("/openapi/v3").mustCode(t, http.StatusOK)
	ours := ts.scrape(t)
	checked := 0
	for name, f := range ours {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_") {
			continue // the Prometheus client's own, as in every Kubernetes component
		}
		want := real[name]
		if name == "apiserver_terminated_watchers_total" && want == nil {
			// A counter that never counted has no sample and is left out
			// of a scrape: no watcher was too slow while it was recorded.
			// Its definition: storage/cacher/metrics/metrics.go.
			continue
		}
		if !assert.NotNil(t, want, "%s is not a kube-apiserver metric", name) {
			continue
		}
		checked++
		assert.Equal(t, want.GetHelp(), f.GetHelp(), name)
		assert.Equal(t, want.GetType(), f.GetType(), name)
		require.NotEmpty(t, want.GetMetric(), name)
		require.NotEmpty(t, f.GetMetric(), name)
		assert.Equal(t, labelNames(want.GetMetric()[0]), labelNames(f.GetMetric()[0]), name)
	}
	assert.GreaterOrEqual(t, checked, 11)
	wc.close()
}

func labelNames(m *dto.Metric) []string {
	var names []string
	for _, l := range m.GetLabel() {
		names = append(names, l.GetName())
	}
	return names
}
