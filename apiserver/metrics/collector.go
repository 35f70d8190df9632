package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"listwatch/apiserver/cacher"
)

// What is read at scrape time. kube-apiserver updates most of these as
// things happen (a counter per event dispatched, per event written to a
// watch); we read the counters the watch cache keeps anyway when
// /metrics is asked, so nothing on the fan-out path knows metrics exist.

// Source is what the collector reads from the server.
type Source interface {
	// Caches are the watch caches being served, one per resource.
	Caches() []Cache
	// InFlight is how many read-only and mutating requests are being
	// served now (watches are neither: they are long-running).
	InFlight() (readOnly, mutating int)
}

// Cache is one resource's watch cache and what it holds.
type Cache struct {
	Group, Version, Resource string
	Totals                   cacher.Totals
}

// collector turns a Source into metrics. Each desc is one metric family
// with kube-apiserver's name, help and labels.
type collector struct {
	src Source

	watchEvents, received, dispatched, resourceVersion, capacity, initializations,
	terminated, objects, inflight *prometheus.Desc
}

var groupResource = []string{"group", "resource"}

func newCollector(src Source) *collector {
	return &collector{
		src: src,
		// endpoints/metrics/metrics.go
		watchEvents: prometheus.NewDesc("apiserver_watch_events_total",
			"[BETA] Number of events sent in watch clients", []string{"group", "version", "resource"}, nil),
		inflight: prometheus.NewDesc("apiserver_current_inflight_requests",
			"[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
			[]string{"request_kind"}, nil),
		// storage/cacher/metrics/metrics.go
		received: prometheus.NewDesc("apiserver_watch_cache_events_received_total",
			"[ALPHA] Counter of events received in watch cache broken by resource type.", groupResource, nil),
		dispatched: prometheus.NewDesc("apiserver_watch_cache_events_dispatched_total",
			"[ALPHA] Counter of events dispatched in watch cache broken by resource type.", groupResource, nil),
		resourceVersion: prometheus.NewDesc("apiserver_watch_cache_resource_version",
			"[ALPHA] Current resource version of watch cache broken by resource type. This is truncated to the 15 least significant digits.",
			groupResource, nil),
		// No "apiserver_" here: kube-apiserver registers it with a
		// subsystem and no namespace.
		capacity: prometheus.NewDesc("watch_cache_capacity",
			"[ALPHA] Total capacity of watch cache broken by resource type.", groupResource, nil),
		initializations: prometheus.NewDesc("apiserver_watch_cache_initializations_total",
			"[ALPHA] Counter of watch cache initializations broken by resource type.", groupResource, nil),
		terminated: prometheus.NewDesc("apiserver_terminated_watchers_total",
			"[ALPHA] Counter of watchers closed due to unresponsiveness broken by resource type.", groupResource, nil),
		// storage/etcd3/metrics/metrics.go. Its older name,
		// apiserver_storage_objects{resource}, was deprecated in 1.34 and,
		// being STABLE, is hidden three minor releases later: 1.37 no
		// longer serves it (component-base/metrics/registry.go, shouldHide).
		objects: prometheus.NewDesc("apiserver_resource_objects",
			"[ALPHA] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
			groupResource, nil),
	}
}

// Describe sends every family's description.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.watchEvents, c.inflight, c.received, c.dispatched, c.resourceVersion,
		c.capacity, c.initializations, c.terminated, c.objects} {
		ch <- d
	}
}

// resourceVersionDigits keeps the 15 least significant digits of a
// revision, as kube-apiserver does, so a float64 holds it exactly.
const resourceVersionDigits = 1e15

// Collect reads the source and sends one sample per family and label set.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	// kube-apiserver reports the most in flight during the last second
	// (its help says so); we report how many are in flight as scraped.
	readOnly, mutating := c.src.InFlight()
	ch <- prometheus.MustNewConstMetric(c.inflight, prometheus.GaugeValue, float64(readOnly), "readOnly")
	ch <- prometheus.MustNewConstMetric(c.inflight, prometheus.GaugeValue, float64(mutating), "mutating")
	for _, cache := range c.src.Caches() {
		t, g, r := cache.Totals, cache.Group, cache.Resource
		counter := func(d *prometheus.Desc, v int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), g, r)
		}
		gauge := func(d *prometheus.Desc, v int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), g, r)
		}
		ch <- prometheus.MustNewConstMetric(c.watchEvents, prometheus.CounterValue, float64(t.EventsSent), g, cache.Version, r)
		counter(c.received, t.EventsReceived)
		counter(c.dispatched, t.EventsDispatched)
		counter(c.initializations, t.Initializations)
		counter(c.terminated, t.ClosedTooSlow)
		gauge(c.resourceVersion, t.Revision%resourceVersionDigits)
		gauge(c.capacity, int64(t.HistoryCap))
		gauge(c.objects, int64(t.Objects))
	}
}
