package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served, as on kube-apiserver.
const Path = "/metrics"

// Component is the "component" label of the resource requests and of
// discovery's /api and /apis: kube-apiserver writes "apiserver"
// (endpoints/metrics.APIServerComponent); its other paths (/readyz,
// /openapi/v3) have none.
const Component = "apiserver"

// Request is what a request is counted by: kube-apiserver's labels
// (endpoints/metrics.MonitorRequest).
type Request struct {
	// Verb is the request's verb as kube-apiserver reports it: GET, LIST,
	// WATCH, POST, PUT, PATCH, APPLY or DELETE (CleanVerb, CanonicalVerb).
	Verb string
	// Group, Version, Resource and Subresource name what was asked for.
	// A path that is no resource has only its Subresource set, to the
	// path as kube-apiserver's handler for it names it: "/readyz",
	// "openapi/v3", "api".
	Group, Version, Resource, Subresource string
	// Scope is "resource" for one object (and every create), "namespace"
	// for a collection in a namespace, "cluster" for one across
	// namespaces or of a cluster-scoped kind, "" for a path that is no
	// resource (CleanScope).
	Scope string
	// Component is Component or empty (see there).
	Component string
}

// Metrics is one apiserver's metrics: its own registry (no process-wide
// state, so two servers in one test count apart), the request metrics
// updated as requests end, and the collector that reads everything else
// when scraped.
type Metrics struct {
	handler     http.Handler
	requests    *prometheus.CounterVec
	durations   *prometheus.HistogramVec
	longRunning *prometheus.GaugeVec
}

// requestLabels are apiserver_request_duration_seconds' labels;
// apiserver_request_total adds "code".
var requestLabels = []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}

// New returns the metrics of a server whose watch caches and in-flight
// requests src reports.
func New(src Source) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, append(requestLabels, "code")),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "apiserver_request_duration_seconds",
			Help: "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			// kube-apiserver's buckets, chosen for its latency objectives.
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
				4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, requestLabels),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.requests, m.durations, m.longRunning, newCollector(src),
		// go_* and process_*, as every Kubernetes component serves them.
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// Observe counts one request that ended with code after elapsed. A watch
// is counted when it ends, its duration how long it was open, as
// kube-apiserver counts it.
func (m *Metrics) Observe(r Request, code int, elapsed time.Duration) {
	m.requests.WithLabelValues(r.Verb, "", r.Group, r.Version, r.Resource, r.Subresource, r.Scope, r.Component, strconv.Itoa(code)).Inc()
	m.durations.WithLabelValues(r.Verb, "", r.Group, r.Version, r.Resource, r.Subresource, r.Scope, r.Component).Observe(elapsed.Seconds())
}

// StartLongRunning counts r as a long-running request (a watch), until
// EndLongRunning is called with the same labels when it ends.
func (m *Metrics) StartLongRunning(r Request) { m.longRunningGauge(r).Inc() }

// EndLongRunning ends what StartLongRunning began.
func (m *Metrics) EndLongRunning(r Request) { m.longRunningGauge(r).Dec() }

func (m *Metrics) longRunningGauge(r Request) prometheus.Gauge {
	return m.longRunning.WithLabelValues(r.Verb, r.Group, r.Version, r.Resource, r.Subresource, r.Scope, r.Component)
}

// ServeHTTP serves the metrics in the format the client asks for:
// Prometheus' text format unless its Accept header names another that
// the Prometheus client speaks (kubectl get --raw /metrics gets text).
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }
