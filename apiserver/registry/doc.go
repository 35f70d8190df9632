// Package registry is the server's table of resources: for each kind it
// serves (namespaces, configmaps, secrets, pods, services, events,
// serviceaccounts, podtemplates, deployments, replicasets, cronjobs,
// events.k8s.io events, leases) everything routing, discovery,
// defaulting, validation, Table output and storage need to know, and,
// once the server runs, its watch cache.
//
// Where it sits in the data flow: the route table looks a path's resource
// up here, the handlers read its rules (names, scope, what a delete
// answers, generation) and its store keys, and the WatchServer and LIST
// reach its watch cache through it.
//
//	route ──► registry.Entry ──► handlers (rules, keys) ──► Storage ──► store
//	                          └─► cacher (LIST at an RV, WATCH)
//
// Files: resources.go is the one table (kinds, short names, verbs, name
// rules, Table columns); registry.go finds entries by path or by group and
// resource; names.go validates metadata and generates names; namespaces.go
// gives namespaces their server-side fields; defaults.go fills in the
// fields a client may leave out (a Deployment's strategy), with
// podspecdefaults.go for every pod spec (a Pod's and a template's) and
// poddefaults.go for a Pod's own, podadmission.go what the default
// admission plugins add to a new Pod (its service account token,
// priority, tolerations) and qos.go its QoS class; jsonmembers.go edits
// JSON objects in field order and podfieldorder.go has the orders;
// leases.go and
// datakeys.go check kinds' own fields; cronjobs.go is batch/v1's
// CronJobs (defaults, validation, columns); eventsv1.go says how events.k8s.io
// Events are kept: as core Events, converted on the way in and out
// (storedas.go, the store as a resource that is stored in another version
// sees it, and eventconversion.go, the field mapping); table.go turns objects into meta.k8s.io Tables for
// kubectl get, with each kind's columns in printers.go and
// printers_controllers.go. statusmetadata.go has what a write through a
// built-in kind's /status keeps of the stored metadata.
//
// What it mirrors in Kubernetes: each pkg/registry/<group>/<resource>
// package (its REST storage and strategy), registry/rest's name checks,
// k8s.io/apimachinery/pkg/api/validation (ValidateObjectMeta) and
// pkg/printers/internalversion (the Table columns).
package registry
