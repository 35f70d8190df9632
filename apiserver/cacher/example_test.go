package cacher_test

import (
	"context"
	"fmt"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/store"
)

// One store watch, fanned out: a watch from resourceVersion 0 gets the
// current state as synthetic ADDED events, then every change.
func Example() {
	ctx := context.Background()
	s := store.New(store.Options{})
	defer s.Close()
	cm := func(name string) *api.Object {
		return &api.Object{APIVersion: "v1", Kind: "ConfigMap",
			Metadata: api.ObjectMeta{Name: name, Namespace: "default"}}
	}
	_, _ = s.Create(ctx, "/registry/configmaps/default/a", cm("a"))

	c, err := cacher.New(ctx, cacher.Config{
		Store: s, Prefix: "/registry/configmaps/",
		Resource: api.GroupResource{Resource: "configmaps"},
		Kind:     "ConfigMap", APIVersion: "v1",
	})
	if err != nil {
		panic(err)
	}
	defer c.Stop()

	w, err := c.Watch(ctx, cacher.WatchOptions{Namespace: "default"})
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	next := func() {
		frames, err := w.Next(ctx, nil)
		if err != nil {
			panic(err)
		}
		for _, f := range frames {
			var ev api.Event
			if err := ev.UnmarshalJSON(f); err != nil {
				panic(err)
			}
			fmt.Printf("client got %s %s at rev %s\n", ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion)
		}
	}

	next() // the synthetic ADDED for a
	_, _ = s.Create(ctx, "/registry/configmaps/default/b", cm("b"))
	next() // the live ADDED for b
	fmt.Println("frames encoded:", c.Stats().FramesEncoded)
	// Output:
	// client got ADDED a at rev 2
	// client got ADDED b at rev 3
	// frames encoded: 2
}
