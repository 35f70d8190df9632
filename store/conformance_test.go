package store_test

import (
	"testing"

	"listwatch/internal/leakcheck"
	"listwatch/store"
	"listwatch/store/storetest"
)

// The in-memory store passes the same conformance suite as the etcd store
// of the nested module listwatch/etcd.
func TestConformance(t *testing.T) {
	defer leakcheck.Check(t)()
	storetest.Run(t, func(t *testing.T) store.Interface {
		s := store.New(store.Options{})
		t.Cleanup(s.Close)
		return s
	})
}
