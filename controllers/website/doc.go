// Package website is an operator for a kind of our own: a Website
// (websites.workshop.example.com, defined by the CustomResourceDefinition
// in CRD) is turned into a ConfigMap "<name>-content" holding its page and
// a Deployment "<name>" serving it, both owned by the Website, and its
// status reports observedGeneration, readyReplicas and a Ready condition.
//
// Where it sits: on the client side, like the built-in controllers beside
// it. Three informers (websites, deployments, configmaps) feed one
// workqueue of Website keys; an owned object's events queue its owner's
// key. The reconcile reads everything from the caches (level-triggered),
// creates what is missing and updates what differs. Deleting a Website is
// left to the garbage collector (package gc), which must be told to watch
// websites (manager.Config.GCKinds).
//
// examples/14-operator runs it step by step and chaos/ checks that it
// converges under faults. It follows the shape of an operator built with
// k8s.io/sample-controller (controller.go): informers, a workqueue,
// owner references and status through the status subresource.
package website
