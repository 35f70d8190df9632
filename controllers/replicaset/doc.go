// Package replicaset is the ReplicaSet controller: for each ReplicaSet it
// keeps spec.replicas Pods made from spec.template, each with an owner
// reference back to the ReplicaSet, and reports what it sees in the
// ReplicaSet's status (replicas, fullyLabeledReplicas, readyReplicas,
// availableReplicas, observedGeneration). Deployments do not make Pods:
// they make ReplicaSets (package deployment), and this controller makes
// their Pods.
//
// Where it sits: two informers (ReplicaSets, Pods) feed one workqueue of
// ReplicaSet keys; a Pod's events queue its owning ReplicaSet's key. The
// reconcile reads the ReplicaSet and its Pods from the informers' caches,
// compares, and creates or deletes the difference. Expectations
// (controllers.Expectations) stop it from acting twice on a cache that has
// not yet seen its own creations and deletions: it creates 3 Pods, records
// "3 creations expected", and does not count again until the 3 ADDED
// events have arrived (or five minutes have passed).
//
//	ReplicaSet informer ─┐
//	                     ├─► queue of ReplicaSet keys ─► reconcile ─► create/delete Pods, write status
//	Pod informer ────────┘   (a Pod's key → its owner's)    ▲
//	                                                          └ expectations: seen my own writes yet?
//
// It mirrors k8s.io/kubernetes/pkg/controller/replicaset (replica_set.go:
// syncReplicaSet, manageReplicas, slowStartBatch, getPodsToDelete;
// replica_set_utils.go: calculateStatus) and the pod control and
// expectations of pkg/controller/controller_utils.go, reduced: Pods that
// match the selector but belong to no one are not adopted (the real
// controller claims them, ClaimPods), a selector is matchLabels only,
// expectations count deletions instead of tracking each Pod's UID
// (UIDTrackingControllerExpectations), and minReadySeconds is taken as 0
// (ready is available).
//
// Read controller.go (handlers and reconcile), then pods.go (which Pods,
// which to delete, creating them in slow-start batches), then status.go.
package replicaset
