package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"listwatch/api"
	"listwatch/etcd"
	"listwatch/store"
)

// The store on etcd keeps the in-memory store's contract: a resourceVersion
// is the revision that last wrote the object (etcd's mod_revision), a stale
// one is a conflict, and a list reads one revision of the whole cluster.
func Example() {
	ctx := context.Background()
	// sharedClient is a client of the embedded etcd the tests start
	// (helpers_test.go); embedded.Start and embedded.NewClient make one.
	s, err := etcd.New(ctx, sharedClient, etcd.Options{Prefix: "/example"})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	const key = "/registry/configmaps/default/demo"
	created, _ := s.Create(ctx, key, &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: "default", Name: "demo"}})
	rv, _ := strconv.ParseInt(created.Metadata.ResourceVersion, 10, 64)

	_, err = s.Update(ctx, key, created, store.Preconditions{ResourceVersion: rv - 1})
	fmt.Println("update with a stale resourceVersion is a conflict:", errors.Is(err, store.ErrConflict))

	updated, _ := s.Update(ctx, key, created, store.Preconditions{ResourceVersion: rv})
	next, _ := strconv.ParseInt(updated.Metadata.ResourceVersion, 10, 64)
	fmt.Println("the update got a newer revision:", next > rv)

	list, _ := s.List(ctx, "/registry/configmaps/", store.ListOptions{})
	fmt.Println("listed", len(list.Items), "object at a revision at least as new:", list.Revision >= next)

	_, _ = s.Delete(ctx, key, store.Preconditions{})
	// Output:
	// update with a stale resourceVersion is a conflict: true
	// the update got a newer revision: true
	// listed 1 object at a revision at least as new: true
}
