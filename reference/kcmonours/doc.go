// Package kcmonours proves that Kubernetes' own controllers run on
// listwatch's apiserver: its test starts `cmd/apiserver --tls` from the
// repository's core module and the unmodified kube-controller-manager
// v1.37.2 that `go run ./cmd/refcluster build` puts in bin/, with the
// deployment, replicaset, garbage collector, namespace and serviceaccount
// controllers and leader election on, then drives a Deployment with
// kubectl as a user would: created with three replicas it gets a
// ReplicaSet and three Pods, scaled it keeps one, deleted its ReplicaSet
// and Pods go too (the garbage collector's work).
//
// Where it sits: outside the list-watch data flow, like the rest of this
// module. It imports nothing from the core module; it builds and runs its
// binaries, and waits with `kubectl wait`, which watches.
//
// Why it matters: kube-controller-manager is client-go with its defaults
// (protobuf, watch-list, informers over every resource the garbage
// collector finds in discovery, Lease-based leader election, Events), so
// every kind it reads and writes must be served as kube-apiserver serves
// it. Nothing is mocked; a 404 or a field we do not default shows up as a
// controller that never syncs.
//
// Read kcm_test.go; process_test.go builds, starts and stops the two programs.
package kcmonours
