// Package deployment is the Deployment controller: it rolls each
// Deployment out through ReplicaSets, one per version of its Pod
// template, and reports the rollout in the Deployment's status. It never
// touches a Pod: the ReplicaSet controller (package replicaset) makes them.
//
// Where it sits: two informers (Deployments, ReplicaSets) feed one
// workqueue of Deployment keys; a ReplicaSet's events queue its owning
// Deployment's key. The reconcile reads the Deployment and its ReplicaSets
// from the informers' caches and takes one step:
//
//	Deployment web (template v2, replicas 3)
//	   ├─ ReplicaSet web-<hash of v1>  revision 1  replicas 3 → 2 → … → 0   (kept for rollback)
//	   └─ ReplicaSet web-<hash of v2>  revision 2  replicas 0 → 1 → … → 3
//
// The new ReplicaSet is the one whose template equals the Deployment's
// (ignoring the pod-template-hash label); a changed template gets a new
// ReplicaSet named after the template's hash, with the next revision
// (deployment.kubernetes.io/revision). RollingUpdate grows the new one as
// far as maxSurge allows and shrinks the old ones as far as
// maxUnavailable allows, using the ReplicaSets' status.availableReplicas;
// Recreate empties the old ones first. Old ReplicaSets beyond
// revisionHistoryLimit are deleted. Because the revisions are ReplicaSets,
// `kubectl rollout history` lists them and `kubectl rollout undo` copies an
// old one's template back into the Deployment, which makes that
// ReplicaSet the new one again, with a new revision number. Each scaling
// is recorded as an Event (ScalingReplicaSet), which `kubectl describe
// deployment` shows.
//
// It mirrors k8s.io/kubernetes/pkg/controller/deployment
// (deployment_controller.go syncDeployment; sync.go
// getAllReplicaSetsAndSyncRevision, getNewReplicaSet, scaleReplicaSet,
// cleanupDeployment, calculateStatus; rolling.go; recreate.go;
// util/deployment_util.go), reduced: a paused Deployment is left alone
// rather than scaled proportionally, a scale in the middle of a rollout is
// absorbed by the rolling update instead of being spread across the
// ReplicaSets, orphaned ReplicaSets are not adopted, hash collisions are
// reported rather than resolved with status.collisionCount,
// progressDeadlineSeconds is not enforced, minReadySeconds is passed on
// but not waited for, and the pod-template-hash is computed over the
// template's JSON, so it differs from kube-controller-manager's.
//
// Read controller.go (handlers and reconcile), then replicasets.go (which
// ReplicaSet is new, revisions, creating and scaling), rollout.go (the two
// strategies and the cleanup), status.go, and spec.go and hash.go.
package deployment
