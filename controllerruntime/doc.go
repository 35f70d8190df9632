// Package controllerruntime proves that an operator built the way most
// are, with sigs.k8s.io/controller-runtime (the library under kubebuilder
// and operator-sdk), runs unmodified on listwatch's apiserver.
//
// It is a separate Go module (listwatch/controllerruntime) because
// controller-runtime brings k8s.io/apiextensions-apiserver, zap, fsnotify
// and its envtest along, which neither the core module nor interop/ should
// carry (README.md, "Dependencies").
//
// What runs, in the test (manager_test.go): our apiserver in-process, as
// interop/'s tests start it; envtest's Environment pointed at it
// (UseExistingCluster with our rest.Config) installs the Website
// CustomResourceDefinition and waits for discovery to serve it, as a
// kubebuilder project's suite_test.go does against a real kube-apiserver;
// our Deployment, ReplicaSet, kubelet stand-in and garbage collector
// (listwatch/controllers/manager) run beside it; and two controller-runtime
// managers with leader election (a Lease), a cache and this package's
// Reconciler compete. The leader puts a finalizer on a Website, turns it
// into a ConfigMap (by server-side apply, watched for its metadata only)
// and a Deployment (by CreateOrUpdate) that it controls (owner
// references), records an Event and writes the Website's status; when it
// stops, it gives the Lease up and the other takes over; deleting the
// Website waits for the new leader to finalize it, then lets the garbage
// collector delete its children.
//
// How long envtest takes to start against our server and against the real
// kube-apiserver and etcd is measured by envtest_bench_test.go and written
// up in docs/12-custom-resources.md.
//
// reconciler_test.go finalizes a Website twice from one read, as a
// Reconcile queued before the cache has seen the Website go does, and
// checks that only the finalizer removal the apiserver accepted is
// reported as an Event.
//
// client_test.go uses the client the other ways operators do: an
// optimistic-lock merge patch, a status patch, unstructured and
// metadata-only reads, paging and DeleteAllOf.
//
// Read types.go (the Website Go type, its scheme and CRD), then
// reconciler.go, then manager_test.go; harness_test.go starts the servers.
//
// Nothing here mirrors a Kubernetes package: it is a user of Kubernetes'
// client libraries, written as a kubebuilder project would write it.
package controllerruntime
