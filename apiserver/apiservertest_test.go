package apiserver_test

import (
	"testing"

	"listwatch/apiserver/apiservertest"
	"listwatch/internal/leakcheck"
	"listwatch/store"
)

// The store-independent API suite on the in-memory store; the nested
// module listwatch/etcd runs the same suite on etcd.
func TestSuiteOnMemoryStore(t *testing.T) {
	defer leakcheck.Check(t)()
	apiservertest.Run(t, func(t *testing.T) store.Interface {
		s := store.New(store.Options{})
		t.Cleanup(s.Close)
		return s
	})
}
