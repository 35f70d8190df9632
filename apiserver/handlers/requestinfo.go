package handlers

import (
	"net/http"

	"listwatch/apiserver/registry"
)

// RequestInfo is what the path says about a resource request (Kubernetes:
// endpoints/request.RequestInfo).
type RequestInfo struct {
	// Entry is the resource the path names.
	Entry *registry.Entry
	// Namespace is the path's namespace; "" for cluster-scoped resources
	// and all-namespace lists and watches.
	Namespace string
	Name      string
	// WatchPath: the request came through the legacy /watch/ prefix.
	WatchPath bool
	// AllNamespaces: a namespaced resource without /namespaces/{ns}.
	AllNamespaces bool
	// Subresource is the path's last segment after the name ("status",
	// "scale"), or "".
	Subresource string
}

// VerbOf maps method and path to the Kubernetes verb; "" if none fits.
func VerbOf(r *http.Request, ri RequestInfo) string {
	watchParam, _ := queryBool(r.URL.Query(), "watch")
	switch r.Method {
	case http.MethodGet:
		switch {
		case ri.WatchPath || watchParam:
			return registry.VerbWatch
		case ri.Name != "":
			return registry.VerbGet
		default:
			return registry.VerbList
		}
	case http.MethodPost:
		if ri.Name == "" && !ri.AllNamespaces {
			return registry.VerbCreate
		}
	case http.MethodPut:
		if ri.Name != "" {
			return registry.VerbUpdate
		}
	case http.MethodPatch:
		if ri.Name != "" {
			return registry.VerbPatch
		}
	case http.MethodDelete:
		switch {
		case ri.Name != "":
			return registry.VerbDelete
		case !ri.AllNamespaces:
			return registry.VerbDeleteCollection
		}
	}
	return ""
}
