// Package metrics is the apiserver's /metrics: Prometheus' text format,
// with kube-apiserver's metric names and labels, so a dashboard or an
// alert written for a real cluster reads ours.
//
// Where it sits: beside the request path, never in it. Requests are
// counted once each as they end (Requests.Observe, from the server's
// request log), a watch is a long-running request for as long as it is
// open (Requests.LongRunning), and everything else (the watch caches'
// counters, the objects they hold, the requests in flight) is read when
// /metrics is scraped (collector.go), from counters the watch cache keeps
// anyway, so the watch fan-out pays nothing for it but one atomic add per
// write of a batch of frames.
//
//	request ──► handlers ──► Requests.Observe (as it ends)
//	scrape  ──► Metrics.ServeHTTP ──► collector ──► cacher.Totals, in-flight counts
//
// It mirrors k8s.io/apiserver pkg/endpoints/metrics/metrics.go (requests,
// long-running requests, requests in flight, watch events),
// pkg/storage/cacher/metrics/metrics.go (the watch cache) and
// pkg/storage/etcd3/metrics/metrics.go (objects stored), all registered
// through k8s.io/component-base/metrics on the Prometheus Go client, the
// library used here. Read metrics.go, then collector.go.
package metrics
