// Package namespace is the namespace controller: it empties a namespace
// that is being deleted and then lets the apiserver delete it.
//
// Where it sits: a Namespace informer feeds one workqueue of namespace
// names. A DELETE of a namespace only marks it (deletionTimestamp set,
// status.phase Terminating, the finalizer "kubernetes" still in
// spec.finalizers; see apiserver/registry/namespaces.go), and the
// informer's MODIFIED event queues its name. The reconcile finds every
// namespaced resource the server serves (discovery), deletes each one's
// objects in the namespace, and once nothing is left, PUTs
// .../finalize with "kubernetes" removed; that write deletes the
// namespace. Objects that take a while to go (a Pod's grace period,
// another finalizer) make it look again later.
//
//	kubectl delete ns team ─► Namespace team: Terminating ─► informer ─► queue ─► reconcile
//	                                                                              │ discovery, DELETE each collection in team,
//	                                                                              │ until every list is empty,
//	                                   Namespace team gone ◄── PUT .../finalize ◄─┘ spec.finalizers without "kubernetes"
//
// It mirrors k8s.io/kubernetes/pkg/controller/namespace
// (namespace_controller.go: NamespaceController, syncNamespaceFromKey) and
// its deletion/namespaced_resources_deleter.go (Delete,
// deleteAllContent, deleteCollection, listCollection, finalizeNamespace),
// reduced: it sets none of the status conditions
// (NamespaceDeletionDiscoveryFailure, NamespaceDeletionContentFailure, ...)
// the real one writes, and waits for remaining objects with the queue's
// backoff instead of the deleter's estimate of their grace periods.
package namespace
