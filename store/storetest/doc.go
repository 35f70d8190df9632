// Package storetest is the conformance suite of store.Interface: one set of
// tests that every store listwatch can run on must pass. The in-memory
// store runs it from store/ and the etcd store from the nested module
// listwatch/etcd, so "the apiserver runs unchanged on etcd" is a checked
// claim rather than a hope.
//
// It sits beside the store in the data flow (store → apiserver/cacher →
// apiserver), and mirrors k8s.io/apiserver/pkg/storage/testing (store_tests.go,
// watcher_tests.go), the suite Kubernetes runs against its etcd3 store and
// its watch cache alike.
//
// The suite only asserts what the contract promises: revisions increase
// (not that they are dense or start anywhere), keys are read back in order,
// errors match with errors.Is and errors.As. Each test gets a new store from
// the factory and uses keys under its own prefix, so a factory may hand out
// stores that share one server (revisions and compaction are then shared
// too, which the tests allow for).
package storetest
