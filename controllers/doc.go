// Package controllers holds what every controller of the controller
// manager shares: the worker loop that drains a workqueue into a reconcile
// function (RunWorkers), the event handler that turns any event into a key
// (EnqueueHandler), owner references (the links from what a controller
// creates back to what asked for it), Expectations (how a controller
// avoids acting on a cache that has not yet seen its own writes), and the
// Settings every controller takes, among them the cap on its retries'
// backoff (RateLimiter, ratelimiter.go: Kubernetes' limiter unless a test
// asks for a lower cap).
//
// Where it sits: after the informer and the workqueue, at the end of the
// client side's data flow.
//
//	informer ─► EnqueueHandler ─► workqueue ─► RunWorkers ─► reconcile(key)
//	   ▲                                                         │ reads the cache,
//	   └──────────── watch events of what it wrote ◄────────────┘ writes through the client
//
// The controllers themselves are subpackages: deployment (Deployments to
// ReplicaSets), replicaset (ReplicaSets to Pods), kubelet (Pods to Running
// and Ready), gc (the garbage collector), namespace (a deleted namespace
// emptied), serviceaccount (every namespace's default); manager runs them
// together, as cmd/controller-manager does, with leaderelection in front.
// website is an operator for a custom resource, built the same way.
// events.go is how they record Events (client-go's tools/record).
//
// It mirrors pieces of k8s.io/kubernetes/pkg/controller: controller_utils.go
// (ControllerExpectations, the controller ref helpers) and the
// processNextWorkItem loop every controller there repeats; OwnerReference is
// apimachinery's meta/v1 OwnerReference.
package controllers
