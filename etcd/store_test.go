package etcd_test

import (
	"testing"

	"listwatch/etcd"
	"listwatch/store"
	"listwatch/store/storetest"
)

// The etcd store passes the conformance suite the in-memory store passes.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Interface {
		return newStore(t, etcd.Options{})
	})
}
