package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"listwatch/api"
	"listwatch/narrate"
	"listwatch/store"
)

// The life of one ConfigMap: created, listed, watched from the list's
// revision, updated, deleted. The narration lines (from the store) and the
// printed lines (from the example) interleave in the order things happen.
func Example() {
	ctx := context.Background()
	s := store.New(store.Options{
		Tracer: narrate.New(os.Stdout, narrate.WithoutTimes()),
		Now:    func() time.Time { return time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC) },
	})
	defer s.Close()
	fmt.Println("a new store is at revision", s.Revision())

	const key = "/registry/configmaps/default/demo"
	cm := &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: "default", Name: "demo"}}
	created, _ := s.Create(ctx, key, cm)
	fmt.Println("created: resourceVersion", created.Metadata.ResourceVersion,
		"creationTimestamp", created.Metadata.CreationTimestamp.Format(time.RFC3339))
	if _, err := s.Create(ctx, key, cm); errors.Is(err, store.ErrAlreadyExists) {
		fmt.Println("create again:", err)
	}

	// List, then watch from the list's revision: nothing is missed.
	list, _ := s.List(ctx, "/registry/configmaps/", store.ListOptions{})
	fmt.Println("listed", len(list.Items), "object(s) at revision", list.Revision)
	w, _ := s.Watch(ctx, "/registry/configmaps/", list.Revision)
	defer w.Stop()

	_, _ = s.GuaranteedUpdate(ctx, key, func(cur *api.Object) (*api.Object, error) {
		cur.Metadata.Labels = map[string]string{"app": "demo"}
		return cur, nil
	})
	_, err := s.Update(ctx, key, cm, store.Preconditions{ResourceVersion: 2})
	fmt.Println("update with a stale resourceVersion:", err)
	_, _ = s.Delete(ctx, key, store.Preconditions{})

	for range 2 {
		ev := <-w.Events()
		fmt.Println("event:", ev.Type, "rev", ev.Revision,
			"resourceVersion", ev.Object.Metadata.ResourceVersion, "labels", ev.Object.Metadata.Labels)
	}
	// Output:
	// a new store is at revision 1
	// store         rev 2 ADDED /registry/configmaps/default/demo
	// created: resourceVersion 2 creationTimestamp 2024-05-01T12:00:00Z
	// create again: key already exists: /registry/configmaps/default/demo
	// listed 1 object(s) at revision 2
	// store         watch /registry/configmaps/ from rev 2: live
	// store         rev 3 MODIFIED /registry/configmaps/default/demo
	// update with a stale resourceVersion: precondition failed: /registry/configmaps/default/demo: resourceVersion is 3, precondition wants 2
	// store         rev 4 DELETED /registry/configmaps/default/demo
	// event: MODIFIED rev 3 resourceVersion 3 labels map[app:demo]
	// event: DELETED rev 4 resourceVersion 4 labels map[app:demo]
	// store         closed at rev 4
}

// Paging: every page is read at the revision of the first, the way a
// Kubernetes continue token works, even while writes go on.
func ExampleStore_List() {
	ctx := context.Background()
	s := store.New(store.Options{})
	defer s.Close()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		_, _ = s.Create(ctx, "/registry/configmaps/default/"+name,
			&api.Object{Metadata: api.ObjectMeta{Namespace: "default", Name: name}})
	}

	opts := store.ListOptions{Limit: 2}
	for {
		page, err := s.List(ctx, "/registry/configmaps/default/", opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		var names []string
		for _, o := range page.Items {
			names = append(names, o.Metadata.Name)
		}
		fmt.Println(names, "at revision", page.Revision, "remaining", page.Remaining)
		if page.NextKey == "" {
			break
		}
		// A write between pages does not show up in the later pages.
		_, _ = s.Delete(ctx, "/registry/configmaps/default/e", store.Preconditions{})
		opts.Revision, opts.StartKey = page.Revision, page.NextKey
	}
	// Output:
	// [a b] at revision 6 remaining 3
	// [c d] at revision 6 remaining 1
	// [e] at revision 6 remaining 0
}
