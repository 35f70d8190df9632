// Package embedded runs etcd inside the current process
// (go.etcd.io/etcd/server/v3/embed): one member with a data directory, or
// the members of a cluster on loopback ports. It is how listwatch runs on
// the real thing without installing anything: the apiserver-etcd binary,
// the examples and every test of the listwatch/etcd module use it.
//
// It sits under the etcd store (etcd ◄─ listwatch/etcd.Store ─► apiserver)
// and mirrors what etcd's own integration tests and kube-apiserver's
// storage tests do (k8s.io/apiserver/pkg/storage/etcd3/testserver): start an
// embedded member on free loopback ports with a temporary data directory.
//
// Read in this order: embedded.go (Start, StartCluster, a quiet client),
// freeport.go (how a member's ports are chosen, and why not on port 0),
// quietstop.go (a member's own stop errors, dropped on Close).
package embedded
