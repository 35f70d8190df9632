// Package kubelet is a stand-in for the kubelet, just enough for
// Deployments to finish rolling out: it watches Pods and, a short delay
// after it first sees one, reports it Running with its containers started
// and ready (status.phase, the Ready condition, containerStatuses). It runs
// no containers. On a real server it also completes graceful deletions,
// which wait for the kubelet to confirm the containers are gone.
//
// Where it sits: a Pod informer feeds a workqueue of Pod keys; the delay is
// the workqueue's AddAfter, so the kubelet never sleeps and a test moves a
// fake clock instead. Like every controller here it is level-triggered: a
// reconcile reads the Pod from the cache and writes only if it is not
// already Running and Ready.
//
// It mirrors, in spirit only, k8s.io/kubernetes/pkg/kubelet's status
// manager (pkg/kubelet/status/status_manager.go), which writes Pod status
// through the pods/status subresource. Nodes, scheduling, probes and
// containers are out of scope: unbound Pods count as this node's.
package kubelet
