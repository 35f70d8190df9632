// Package handlers serves the verbs of the Kubernetes resource API, one file
// per verb: get.go, list.go, create.go, update.go, patch.go, delete.go and
// watch.go. Each reads the request (params.go parses and checks list and
// watch queries as kube-apiserver does; continue.go reads and writes the
// continue tokens of paged lists), does what the verb does to the store or
// the watch cache, and answers through package negotiation.
//
// Where it sits in the data flow: after routing, before storage.
//
//	route (RequestInfo, verb) ──► Handlers.Serve ──► get/list/create/... ──► store
//	                                               │                    └──► cacher (LIST at an RV)
//	                                               └─► watch.go ──► watchserver ──► cacher
//
// Writes and consistent reads go straight to the store; lists at
// resourceVersion "0" or not-older-than N are served by the resource's
// watch cache (the table at the top of list.go says which is which), and
// every watch is handed to the WatchServer.
//
// # Read in this order
//
//   - handlers.go: Handlers.Serve, the verb to the file that serves it;
//   - create.go: the write the reading path (docs/reading-path.md)
//     follows, then its neighbours update.go, patch.go and delete.go;
//   - get.go and list.go (the table at the top of list.go says what is
//     read from the store and what from the watch cache);
//   - watch.go: serveWatch, which hands a watch to the WatchServer;
//   - params.go and continue.go: the list and watch query, and the
//     continue tokens of paged lists.
//
// apply.go, fieldvalidation.go, finalizers.go, listseats.go,
// namespaces.go, pathname.go, requestinfo.go and scale.go are what makes
// the server real rather than what the lesson is about; read them when you
// need them.
//
// # What it mirrors
//
// What it mirrors in Kubernetes: k8s.io/apiserver/pkg/endpoints/handlers
// (get.go, create.go, update.go, patch.go, delete.go, rest.go), with what
// k8s.io/apiserver/pkg/registry/generic/registry/store.go does for each
// verb (optimistic concurrency, generateName, delete preconditions,
// ReturnDeletedObject), k8s.io/apiserver/pkg/endpoints/request
// (RequestInfo) and k8s.io/apiserver/pkg/storage/continue.go.
package handlers
