package apiserver

import (
	"encoding/json"
	"net/http"
	"slices"

	"listwatch/apiserver/crd"
	"listwatch/apiserver/discovery"
	"listwatch/apiserver/faults"
	"listwatch/apiserver/metrics"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/ui"
)

// GET / answers as kube-apiserver's index handler does
// (k8s.io/apiserver pkg/server/routes/index.go, IndexLister): 200 and
// {"paths": [...]}, every listed path sorted, indented by two spaces
// (responsewriters.WriteRawJSON), for "/" and "/index.html" and any method.
// kube-apiserver lists the root of each go-restful web service ("/api",
// "/api/v1", "/apis/apps", "/apis/apps/v1"; APIServerHandler.ListedPaths),
// the listed paths of its other handlers ("/healthz", "/version",
// "/openapi/v3", "/openapi/v3/", and "/apis" and "/apis/" of the
// apiextensions server), and the aggregator adds "/apis/<group>" and
// "/apis/<group>/<version>" for every APIService, a custom resource's
// included. Ours lists the same paths for what we serve, /metrics, and
// our own pages (/ui/, /debug/listwatch and, when enabled, /faults) where
// kube-apiserver would list its /logs.

// rootPaths are the paths GET / lists, sorted.
func rootPaths(entries []*registry.Entry, enableFaults bool) []string {
	paths := []string{"/api", "/api/v1", "/apis", "/apis/", "/healthz", "/livez", "/readyz", "/version",
		discovery.OpenAPIPrefix, discovery.OpenAPIPrefix + "/", debugPath, ui.Path, metrics.Path}
	if enableFaults {
		paths = append(paths, faults.Path)
	}
	for _, e := range entries {
		if e.Group != "" {
			paths = append(paths, "/apis/"+e.Group, "/apis/"+e.APIVersion())
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// indexBody is GET /'s body for paths.
func indexBody(paths []string) []byte {
	b, err := json.MarshalIndent(struct {
		Paths []string `json:"paths"`
	}{paths}, "", "  ")
	if err != nil {
		panic(err) // a list of strings always encodes
	}
	return b
}

// serveIndex writes GET /'s answer.
func serveIndex(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// isBuiltinGroup reports whether group is a built-in resource's ("" is
// the core group). An unknown version of a built-in group is a JSON 404
// Status in kube-apiserver, since the group's go-restful web service
// claims every path under it (APIServerHandler's director); an unknown
// version of a custom resource's group falls through to the plain-text
// 404 of the mux, like an unknown group.
func isBuiltinGroup(group string) bool {
	return group == crd.GroupResource.Group ||
		slices.ContainsFunc(registry.Builtin(), func(r *registry.Resource) bool { return r.Group == group })
}
