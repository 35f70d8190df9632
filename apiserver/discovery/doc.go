// Package discovery is what a client asks before anything else: /version,
// /api and /apis (the group versions), /api/v1 and /apis/apps/v1 (each
// version's resources with kind, scope, verbs and short names), and a
// minimal OpenAPI v3 that lets kubectl create -f and apply -f leave
// validation to the server. That is how "kubectl get cm" knows cm means
// configmaps in v1, namespaced.
//
// Where it sits in the data flow: beside it. The documents are built once,
// at start, from the registry's resource table and served as they are; no
// request here touches the store or a watch cache.
//
//	registry ──► Build / BuildOpenAPI (once) ──► Doc.ServeHTTP ──► kubectl's discovery cache
//
// What it mirrors in Kubernetes: k8s.io/apiserver/pkg/endpoints/discovery
// (legacy.go, root.go, group.go, version.go) and kube-openapi's handler3.
package discovery
