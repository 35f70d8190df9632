package apiserver

import (
	"mime"
	"net/http"
	"strings"
	"time"

	"listwatch/apiserver/discovery"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/handlers"
	"listwatch/apiserver/metrics"
	"listwatch/apiserver/patch"
	"listwatch/apiserver/registry"
)

// Metrics: GET /metrics (package metrics). A resource request is labelled
// when it is routed (labelRequest) and counted when it ends
// (requestEnded): when its handler returns, or, for a watch that goes on
// after it (Server.detach), when the watch ends. Of the paths that are
// no resource, those kube-apiserver counts are counted (labelPath).

// metricsVerbs are kube-apiserver's names for our verbs
// (endpoints/metrics.CleanVerb and CanonicalVerb): the HTTP method, but
// LIST for a GET of a collection and WATCH for a watch.
var metricsVerbs = map[string]string{
	registry.VerbGet: "GET", registry.VerbList: "LIST", registry.VerbWatch: "WATCH",
	registry.VerbCreate: "POST", registry.VerbUpdate: "PUT", registry.VerbPatch: "PATCH",
	registry.VerbDelete: "DELETE", registry.VerbDeleteCollection: "DELETE",
}

// labelRequest records what a resource request is counted as, and counts
// a watch as long-running from now until requestEnded.
func (s *Server) labelRequest(w http.ResponseWriter, r *http.Request, ri handlers.RequestInfo, verb string) {
	rr := filters.RecorderOf(w)
	if rr == nil {
		return
	}
	m := metrics.Request{Verb: metricsVerbs[verb], Group: ri.Entry.Group, Version: ri.Entry.Version,
		Resource: ri.Entry.Name, Subresource: ri.Subresource, Component: metrics.Component}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); verb == registry.VerbPatch && ct == patch.ApplyPatchType {
		m.Verb = "APPLY"
	}
	// endpoints/metrics.CleanScope.
	switch {
	case ri.Name != "" || verb == registry.VerbCreate:
		m.Scope = "resource"
	case ri.Namespace != "":
		m.Scope = "namespace"
	default:
		m.Scope = "cluster"
	}
	rr.Metrics = m
	if m.Verb == "WATCH" {
		s.metrics.StartLongRunning(m)
	}
}

// labelPath records what a request for a path that is no resource is
// counted as, for the paths kube-apiserver counts (a scrape of a real
// server shows these): the health checks under their path, OpenAPI v3
// under "openapi/v3" and "openapi/v3/", and /api and /apis under "api"
// and "apis", with the component "apiserver" for those two only. Any
// other path is not counted: an unknown one must not make a label value.
func labelPath(w http.ResponseWriter, r *http.Request) {
	rr := filters.RecorderOf(w)
	if rr == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return
	}
	m := metrics.Request{Verb: r.Method}
	switch p := r.URL.Path; {
	case p == "/healthz" || p == "/livez" || p == "/readyz":
		m.Subresource = p
	case p == discovery.OpenAPIPrefix:
		m.Subresource = "openapi/v3"
	case strings.HasPrefix(p, discovery.OpenAPIPrefix+"/"):
		m.Subresource = "openapi/v3/"
	case p == "/api" || p == "/apis":
		m.Subresource, m.Component = p[1:], metrics.Component
	default:
		return
	}
	rr.Metrics = m
}

// requestEnded counts a request that ended with code, begun at start.
func (s *Server) requestEnded(m metrics.Request, code int, start time.Time) {
	if m.Verb == "" {
		return // not a resource request
	}
	if m.Verb == "WATCH" {
		s.metrics.EndLongRunning(m)
	}
	s.metrics.Observe(m, code, time.Since(start))
}

// metricsSource is what /metrics reads from the server when scraped.
type metricsSource struct{ s *Server }

func (src metricsSource) Caches() []metrics.Cache {
	entries := src.s.registry.Entries()
	out := make([]metrics.Cache, 0, len(entries))
	for _, e := range entries {
		if e.Cacher == nil {
			continue
		}
		out = append(out, metrics.Cache{Group: e.Group, Version: e.Version, Resource: e.Name, Totals: e.Cacher.Totals()})
	}
	return out
}

func (src metricsSource) InFlight() (readOnly, mutating int) {
	st := src.s.limits.Stats()
	return st.ReadOnly, st.Mutating
}
