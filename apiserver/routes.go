package apiserver

import (
	"net/http"
	"strings"
	"time"

	"listwatch/api"
)

// Routing, with Kubernetes' paths exactly:
//
//	/api/v1/{resource}                                  cluster-scoped collection, or all namespaces
//	/api/v1/{resource}/{name}                           cluster-scoped object
//	/api/v1/namespaces/{ns}/{resource}[/{name}]         namespaced collection / object
//	/apis/{group}/{version}/...                         the same for other groups
//	/api/v1/watch/...                                   legacy watch paths (a name becomes a field selector)
//
// An unknown resource in a known group version is a JSON 404 Status; a path
// outside the API or an unknown group is Go's plain "404 page not found";
// a method the resource does not allow is 405.

// requestInfo is what the path says about a resource request (Kubernetes:
// request.RequestInfo).
type requestInfo struct {
	rs *resourceState
	// namespace is the path's namespace; "" for cluster-scoped resources
	// and all-namespace lists and watches.
	namespace string
	name      string
	// watchPath: the request came through the legacy /watch/ prefix.
	watchPath bool
	// allNamespaces: a namespaced resource without /namespaces/{ns}.
	allNamespaces bool
}

// route dispatches one request.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "/version":
		s.serveDiscovery(w, r, s.discovery.version)
		return
	case path == "/healthz" || path == "/livez" || path == "/readyz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
		return
	case path == openAPIPrefix || strings.HasPrefix(path, openAPIPrefix+"/"):
		s.serveOpenAPI(w, r)
		return
	case path == debugPath:
		s.serveDebug(w, r)
		return
	case path == faultsPath || strings.HasPrefix(path, faultsPath+"/"):
		if !s.cfg.EnableFaults {
			notFoundText(w, r)
			return
		}
		s.serveFaults(w, r)
		return
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var gv string
	var rest []string
	switch {
	case segs[0] == "api" && len(segs) == 1:
		s.serveDiscovery(w, r, s.discovery.api)
		return
	case segs[0] == "api" && segs[1] == "v1":
		gv, rest = "v1", segs[2:]
	case segs[0] == "apis" && len(segs) == 1:
		s.serveDiscovery(w, r, s.discovery.apis)
		return
	case segs[0] == "apis" && len(segs) == 2 && s.discovery.groups[segs[1]] != nil:
		s.serveDiscovery(w, r, s.discovery.groups[segs[1]])
		return
	case segs[0] == "apis" && len(segs) >= 3 && s.byGroupVersion[segs[1]+"/"+segs[2]] != nil:
		gv, rest = segs[1]+"/"+segs[2], segs[3:]
	default:
		notFoundText(w, r)
		return
	}
	if len(rest) == 0 {
		s.serveDiscovery(w, r, s.discovery.resources[gv])
		return
	}
	ri, ok := s.parseResourcePath(gv, rest)
	if !ok {
		s.writeStatus(w, r, api.NewGenericNotFound())
		return
	}
	s.serveResource(w, r, ri)
}

// parseResourcePath reads the part of a path after the group version.
func (s *Server) parseResourcePath(gv string, rest []string) (requestInfo, bool) {
	byName := s.byGroupVersion[gv]
	var ri requestInfo
	if rest[0] == "watch" {
		ri.watchPath, rest = true, rest[1:]
	}
	for _, seg := range rest {
		if seg == "" {
			return ri, false
		}
	}
	switch {
	case len(rest) >= 3 && rest[0] == "namespaces":
		// /namespaces/{ns}/{resource}[/{name}]
		ri.rs = byName[rest[2]]
		if ri.rs == nil || !ri.rs.res.Namespaced || len(rest) > 4 {
			return ri, false
		}
		ri.namespace = rest[1]
		if len(rest) == 4 {
			ri.name = rest[3]
		}
	case len(rest) >= 1:
		// /{resource}[/{name}]
		ri.rs = byName[rest[0]]
		if ri.rs == nil || len(rest) > 2 {
			return ri, false
		}
		if ri.rs.res.Namespaced {
			if len(rest) == 2 {
				return ri, false
			}
			ri.allNamespaces = true
		} else if len(rest) == 2 {
			ri.name = rest[1]
		}
	default:
		return ri, false
	}
	return ri, true
}

// verbOf maps method and path to the Kubernetes verb; "" if none fits.
func verbOf(r *http.Request, ri requestInfo) string {
	watchParam, _ := queryBool(r.URL.Query(), "watch")
	switch r.Method {
	case http.MethodGet:
		switch {
		case ri.watchPath || watchParam:
			return verbWatch
		case ri.name != "":
			return verbGet
		default:
			return verbList
		}
	case http.MethodPost:
		if ri.name == "" && !ri.allNamespaces {
			return verbCreate
		}
	case http.MethodPut:
		if ri.name != "" {
			return verbUpdate
		}
	case http.MethodPatch:
		if ri.name != "" {
			return verbPatch
		}
	case http.MethodDelete:
		switch {
		case ri.name != "":
			return verbDelete
		case !ri.allNamespaces:
			return verbDeleteCollection
		}
	}
	return ""
}

// serveResource runs one resource request: verb, faults, then the handler.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, ri requestInfo) {
	verb := verbOf(r, ri)
	if ri.watchPath && verb != verbWatch {
		verb = ""
	}
	if verb == "" || !ri.rs.res.allows(verb) {
		s.writeStatus(w, r, api.NewMethodNotSupported())
		return
	}
	s.counters.countVerb(verb)
	if st := s.faults.failure(ri.rs.res.GroupResource()); st != nil {
		s.writeStatus(w, r, st)
		return
	}
	if verb != verbWatch {
		// A response to a client that does not read must not hold a
		// handler forever; watches manage their own writes. The deadline
		// is the connection's, so it is cleared afterwards: the next
		// request on a kept-alive connection may well be a long watch.
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
		defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
		if d := s.faults.requestDelay(); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
	}
	switch verb {
	case verbGet, verbList:
		out, err := negotiateOutput(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if verb == verbGet {
			s.serveGet(w, r, ri, out)
			return
		}
		p, err := parseListParams(r.URL.Query(), false, "")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.serveList(w, r, ri, p, out)
	case verbWatch:
		if _, err := negotiateOutput(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		p, err := parseListParams(r.URL.Query(), true, ri.name)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.serveWatch(w, r, ri, p)
	case verbCreate:
		s.serveCreate(w, r, ri)
	case verbUpdate:
		s.serveUpdate(w, r, ri)
	case verbPatch:
		s.servePatch(w, r, ri)
	case verbDelete:
		s.serveDelete(w, r, ri)
	case verbDeleteCollection:
		s.serveDeleteCollection(w, r, ri)
	}
}
