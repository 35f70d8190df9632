// Package registry is the server's table of resources: for each kind it
// serves (namespaces, configmaps, secrets, pods, services, events,
// deployments) everything routing, discovery, validation, Table output and
// storage need to know, and, once the server runs, its watch cache.
//
// Where it sits in the data flow: the route table looks a path's resource
// up here, the handlers read its rules (names, scope, what a delete
// answers, generation) and its store keys, and the WatchServer and LIST
// reach its watch cache through it.
//
//	route ──► registry.Entry ──► handlers (rules, keys) ──► store
//	                          └─► cacher (LIST at an RV, WATCH)
//
// Files: resources.go is the one table (kinds, short names, verbs, name
// rules, Table columns); registry.go finds entries by path or by group and
// resource; names.go validates metadata and generates names; namespaces.go
// gives namespaces their server-side fields; table.go turns objects into
// meta.k8s.io Tables for kubectl get.
//
// What it mirrors in Kubernetes: each pkg/registry/<group>/<resource>
// package (its REST storage and strategy), registry/rest's name checks,
// k8s.io/apimachinery/pkg/api/validation (ValidateObjectMeta) and
// pkg/printers/internalversion (the Table columns).
package registry
