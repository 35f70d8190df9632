package etcd_test

import (
	"fmt"
	"testing"
	"time"

	"listwatch/apiserver/apiservertest"
	"listwatch/etcd"
	"listwatch/store"
)

// The apiserver's store-independent suite, the one the apiserver package
// runs on the in-memory store, on etcd: each test gets an apiserver on a
// store with a key prefix of its own on the shared embedded etcd.
func TestApiserverSuiteOnEtcd(t *testing.T) {
	n := 0
	apiservertest.Run(t, func(t *testing.T) store.Interface {
		n++
		return newStore(t, etcd.Options{Prefix: fmt.Sprintf("/apiservertest-%d-%d", time.Now().UnixNano(), n)})
	})
}
