// Package gc is a garbage collector: it deletes objects whose owners are
// all gone, following metadata.ownerReferences, which is how deleting a
// Deployment removes its Pods (background propagation: the owner goes
// first, its dependents after).
//
// Where it sits: one informer per watched resource, each with an index
// from owner UID to dependents. An object with owners is queued when it
// appears or changes; when any object is deleted, its dependents (found
// through the index) are queued. A reconcile checks each owner in the
// cache and, if the cache does not have it, on the server, since an
// informer that is behind must not get a live object's dependents deleted.
// All owners gone: the object is deleted (with a UID precondition, so a
// new object of the same name is safe). Some gone: only their references
// are removed. An owner found on the server but not yet in its informer's
// cache gets the dependent looked at again with backoff until the cache
// has it (or the server says it is gone): only an owner the informer has
// seen can tell of its deletion, as Kubernetes requeues an owner it has
// not observed.
//
// An owner deleted with propagationPolicy=Orphan or Foreground stays,
// marked, with the finalizer the apiserver added for this collector
// (propagation.go): "orphan" has it remove the owner's references from
// every dependent, "foregroundDeletion" has it delete every dependent and
// wait for those that block their owner's deletion; then it removes the
// finalizer and the owner goes.
//
// It mirrors k8s.io/kubernetes/pkg/controller/garbagecollector, much
// reduced: there is no dependency graph (the owner index stands in for
// it). The resources are configured, and, with Options.Discover, every
// other resource the server serves is watched too, found by discovery and
// looked for again every 30 seconds (discovery.go), as
// kube-controller-manager's collector does; without it, owners of kinds it
// does not watch are assumed to exist.
//
// Read gc.go (the handlers, reconcile, collect), then propagation.go,
// then discovery.go.
package gc
