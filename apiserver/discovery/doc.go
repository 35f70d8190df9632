// Package discovery is what a client asks before anything else: /version,
// /api and /apis (the group versions), /api/v1 and /apis/apps/v1 (each
// version's resources with kind, scope, verbs and short names), the same
// as one aggregated document each for /api and /apis (what kubectl,
// client-go's discovery and controller-runtime's RESTMapper read first),
// and OpenAPI v3: the real server's schemas of the built-in kinds and each
// CustomResourceDefinition's schema, for kubectl explain, and the
// fieldValidation parameter that lets kubectl create -f and apply -f leave
// validation to the server. That is how "kubectl get cm" knows cm means
// configmaps in v1, namespaced.
//
// Where it sits in the data flow: beside it. The documents are built at
// start, and again whenever a CustomResourceDefinition changes what is
// served, from the registry's resource table, and served as they are; no
// request here touches the store or a watch cache.
//
//	registry ──► Build / BuildOpenAPI ──► Doc.ServeHTTP ──► kubectl's discovery cache
//
// Read discovery.go (the legacy documents), aggregated.go, openapi.go,
// then openapi_custom.go.
//
// What it mirrors in Kubernetes: k8s.io/apiserver/pkg/endpoints/discovery
// (legacy.go, root.go, group.go, version.go, aggregated/), kube-openapi's
// handler3, and apiextensions-apiserver's pkg/controller/openapi/builder.
package discovery
