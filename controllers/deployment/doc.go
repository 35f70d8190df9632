// Package deployment is a small Deployment controller: for each Deployment
// it keeps spec.replicas Pods made from spec.template, each with an owner
// reference back to the Deployment, and writes status (replicas,
// updatedReplicas, readyReplicas, availableReplicas, observedGeneration) so
// that `kubectl rollout status` can tell when a rollout is done.
//
// Where it sits: two informers (Deployments, Pods) feed one workqueue of
// Deployment keys; a Pod's events queue its owning Deployment's key. The
// reconcile reads the Deployment and its Pods from the informers' caches
// (level-triggered: it never looks at what an event said), compares, and
// creates or deletes Pods. Expectations stop it from acting twice on a
// cache that has not yet seen its own creations.
//
// It mirrors k8s.io/kubernetes/pkg/controller/deployment and
// pkg/controller/replicaset folded into one, and much reduced: there are no
// ReplicaSets (Pods are owned by the Deployment directly and carry the
// pod-template-hash label a ReplicaSet would give them); a changed
// template is rolled out by creating the new Pods and deleting the old ones
// once the new ones are ready, with no maxSurge or maxUnavailable; orphans
// matching the selector are not adopted; minReadySeconds is taken as 0;
// there are no conditions.
package deployment
