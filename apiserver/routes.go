package apiserver

import (
	"net/http"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/apiserver/discovery"
	"listwatch/apiserver/faults"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/handlers"
	"listwatch/apiserver/metrics"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/ui"
)

// Routing, with Kubernetes' paths exactly:
//
//	/api/v1/{resource}                                  cluster-scoped collection, or all namespaces
//	/api/v1/{resource}/{name}                           cluster-scoped object
//	/api/v1/namespaces/{ns}/{resource}[/{name}]         namespaced collection / object
//	/apis/{group}/{version}/...                         the same for other groups
//	/api/v1/watch/...                                   legacy watch paths (a name becomes a field selector)
//
// GET / lists the served paths (index.go). An unknown resource in a known
// group version, and an unknown version under /api or of a built-in group,
// is a JSON 404 Status; a path outside the API or an unknown group is Go's
// plain "404 page not found"; a method the resource does not allow is 405.

// route dispatches one request.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	pub := s.published.Load()
	labelPath(w, r) // metrics.go
	switch {
	case path == "/" || path == "/index.html":
		serveIndex(w, pub.index)
		return
	case path == "/version":
		s.serveDiscovery(w, r, pub.docs.Version)
		return
	case isHealthPath(path):
		e, rest, _ := healthEndpointOf(path)
		s.serveHealth(w, r, e, rest)
		return
	case path == discovery.OpenAPIPrefix || strings.HasPrefix(path, discovery.OpenAPIPrefix+"/"):
		doc := pub.openAPI.Lookup(path)
		if doc == nil {
			negotiation.NotFoundText(w, r)
			return
		}
		s.serveDiscovery(w, r, doc)
		return
	case path == debugPath:
		s.serveDebug(w, r)
		return
	case path == metrics.Path:
		s.metrics.ServeHTTP(w, r)
		return
	case path == selfSubjectAccessReviewsPath:
		s.serveSelfSubjectAccessReview(w, r) // authorization.go
		return
	case path == strings.TrimSuffix(ui.Path, "/") || strings.HasPrefix(path, ui.Path):
		// The live page: static files, so a browser pointed at the server
		// gets an informer of its own (apiserver/ui, docs/see-it-live.md).
		s.ui.ServeHTTP(w, r)
		return
	case strings.HasPrefix(path, profilingPath):
		if !s.cfg.Profiling {
			negotiation.NotFoundText(w, r)
			return
		}
		serveProfiling(w, r)
		return
	case path == faults.Path || strings.HasPrefix(path, faults.Path+"/"):
		if !s.cfg.EnableFaults {
			negotiation.NotFoundText(w, r)
			return
		}
		s.faults.ServeHTTP(w, r)
		return
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var gv string
	var rest []string
	switch {
	case segs[0] == "api" && len(segs) == 1:
		s.serveDiscovery(w, r, pub.docs.Root(r, true))
		return
	case segs[0] == "api" && segs[1] == "v1":
		gv, rest = "v1", segs[2:]
	case segs[0] == "api":
		negotiation.WriteStatus(w, r, api.NewGenericNotFound())
		return
	case segs[0] == "apis" && len(segs) == 1:
		s.serveDiscovery(w, r, pub.docs.Root(r, false))
		return
	case segs[0] == "apis" && len(segs) == 2 && pub.docs.Groups[segs[1]] != nil:
		s.serveDiscovery(w, r, pub.docs.Groups[segs[1]])
		return
	case segs[0] == "apis" && len(segs) >= 3 && s.registry.ServesGroupVersion(segs[1]+"/"+segs[2]):
		gv, rest = segs[1]+"/"+segs[2], segs[3:]
	case segs[0] == "apis" && len(segs) >= 3 && segs[1] != "" && isBuiltinGroup(segs[1]):
		negotiation.WriteStatus(w, r, api.NewGenericNotFound())
		return
	default:
		negotiation.NotFoundText(w, r)
		return
	}
	if len(rest) == 0 {
		doc := pub.docs.Resources[gv]
		if doc == nil { // a custom resource's group version, just removed
			negotiation.NotFoundText(w, r)
			return
		}
		s.serveDiscovery(w, r, doc)
		return
	}
	ri, ok := s.parseResourcePath(gv, rest)
	if !ok {
		negotiation.WriteStatus(w, r, api.NewGenericNotFound())
		return
	}
	s.serveResource(w, r, ri)
}

// serveDiscovery counts and serves a discovery document.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request, doc *discovery.Doc) {
	if r.Method == http.MethodGet {
		s.counters.countVerb("discovery")
	}
	doc.ServeHTTP(w, r)
}

// namespaceSubresources are the names after /namespaces/{name}/ that are
// the namespace's subresources, not resources in it (requestinfo.go's
// namespaceSubresources).
var namespaceSubresources = map[string]bool{registry.SubresourceStatus: true, registry.SubresourceFinalize: true}

// parseResourcePath reads the part of a path after the group version.
func (s *Server) parseResourcePath(gv string, rest []string) (handlers.RequestInfo, bool) {
	var ri handlers.RequestInfo
	if rest[0] == "watch" {
		ri.WatchPath, rest = true, rest[1:]
	}
	for _, seg := range rest {
		if seg == "" {
			return ri, false
		}
	}
	switch {
	case len(rest) == 3 && rest[0] == "namespaces" && gv == "v1" && namespaceSubresources[rest[2]]:
		// /namespaces/{name}/status and /finalize: a namespace's own
		// subresources, not a resource in the namespace.
		ri.Entry = s.registry.Lookup(gv, "namespaces")
		ri.Name, ri.Subresource = rest[1], rest[2]
	case len(rest) >= 3 && rest[0] == "namespaces":
		// /namespaces/{ns}/{resource}[/{name}]
		ri.Entry = s.registry.Lookup(gv, rest[2])
		if ri.Entry == nil || !ri.Entry.Namespaced || len(rest) > 5 {
			return ri, false
		}
		ri.Namespace = rest[1]
		if len(rest) >= 4 {
			ri.Name = rest[3]
		}
		if len(rest) == 5 {
			ri.Subresource = rest[4]
		}
	case len(rest) >= 1:
		// /{resource}[/{name}]
		ri.Entry = s.registry.Lookup(gv, rest[0])
		if ri.Entry == nil || len(rest) > 3 {
			return ri, false
		}
		if ri.Entry.Namespaced {
			if len(rest) >= 2 {
				return ri, false
			}
			ri.AllNamespaces = true
		} else if len(rest) >= 2 {
			ri.Name = rest[1]
		}
		if len(rest) == 3 {
			ri.Subresource = rest[2]
		}
	default:
		return ri, false
	}
	if ri.Subresource != "" && (ri.WatchPath || !ri.Entry.HasSubresource(ri.Subresource)) {
		return ri, false
	}
	return ri, true
}

// serveResource runs one resource request: verb, faults and limits, then
// the verb's handler.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, ri handlers.RequestInfo) {
	verb := handlers.VerbOf(r, ri)
	if ri.WatchPath && verb != registry.VerbWatch {
		verb = ""
	}
	if ri.Subresource != "" && verb != registry.VerbGet && verb != registry.VerbUpdate && verb != registry.VerbPatch {
		verb = "" // a subresource is read, replaced or patched, nothing else
	}
	if ri.Subresource == registry.SubresourceFinalize && verb != registry.VerbUpdate {
		verb = "" // a namespace's finalize is only replaced
	}
	if verb == "" || !ri.Entry.Allows(verb) {
		negotiation.WriteStatus(w, r, api.NewMethodNotSupported())
		return
	}
	s.counters.countVerb(verb)
	s.labelRequest(w, r, ri, verb) // metrics.go
	if st := s.faults.Failure(ri.Entry.GroupResource()); st != nil {
		negotiation.WriteStatus(w, r, st)
		return
	}
	if verb != registry.VerbWatch {
		// A response to a client that does not read must not hold a
		// handler forever; watches manage their own writes. The deadline
		// starts with the response, so a slow handler still answers.
		var done func()
		w, done = filters.WriteDeadline(w, s.writeTimeout)
		defer done()
		if d := s.faults.RequestDelay(); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
	}
	s.handlers.Serve(w, r, ri, verb)
}
