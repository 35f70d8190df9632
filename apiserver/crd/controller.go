package crd

import (
	"bytes"
	"context"
	"errors"
	"time"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
	"listwatch/store"
)

// Host is the server side of serving custom resources: what the
// controller asks of the apiserver when definitions come and go.
type Host interface {
	// Install starts serving a resource in each of its versions (the
	// storage version first): a watch cache each, routes, discovery.
	Install(ctx context.Context, versions []*registry.Resource) error
	// Update replaces how a served resource is served (its versions,
	// schemas, columns) without touching its objects: each version gets a
	// new watch cache, as kube-apiserver gives it a new storage.
	Update(ctx context.Context, versions []*registry.Resource) error
	// Uninstall stops serving gr and deletes its objects; open watches see
	// one DELETED per object, then their end.
	Uninstall(ctx context.Context, gr api.GroupResource) error
}

// Prefix is the store prefix of the definitions.
var Prefix = "/registry/" + GroupResource.Resource + "/"

// served is what the controller has installed for one definition.
type served struct {
	uid  string
	gr   api.GroupResource
	spec []byte
}

// Controller follows the definitions in the store and keeps the served
// custom resources in step: the apiextensions-apiserver's
// crdHandler and its finalizer (customresourcecleanup) in one loop.
type Controller struct {
	store  store.Interface
	host   Host
	tracer *narrate.Tracer
	served map[string]served // by definition name
}

// NewController returns a controller; Sync it once, then Run it.
func NewController(st store.Interface, host Host, tr *narrate.Tracer) *Controller {
	return &Controller{store: st, host: host, tracer: tr, served: map[string]served{}}
}

// Sync lists the definitions and serves exactly those. It returns the
// revision it listed at, to watch from.
func (c *Controller) Sync(ctx context.Context) (int64, error) {
	res, err := c.store.List(ctx, Prefix, store.ListOptions{})
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, obj := range res.Items {
		seen[obj.Metadata.Name] = true
		c.apply(ctx, obj)
	}
	for name := range c.served {
		if !seen[name] {
			c.remove(ctx, name)
		}
	}
	return res.Revision, nil
}

// Run follows the store until ctx ends, re-syncing whenever its watch
// ends for another reason.
func (c *Controller) Run(ctx context.Context, from int64) {
	for ctx.Err() == nil {
		w, err := c.store.Watch(ctx, Prefix, from)
		if err == nil {
			from = c.follow(ctx, w, from)
			w.Stop()
		}
		if ctx.Err() != nil {
			return
		}
		if rev, err := c.Sync(ctx); err == nil {
			from = rev
		} else {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond): // the store is failing: try again shortly
			}
		}
	}
}

func (c *Controller) follow(ctx context.Context, w store.Watcher, from int64) int64 {
	for {
		select {
		case <-ctx.Done():
			return from
		case ev, ok := <-w.Events():
			if !ok {
				return from
			}
			if ev.Type == api.Bookmark {
				continue
			}
			from = ev.Revision
			switch ev.Type {
			case api.Added, api.Modified:
				c.apply(ctx, ev.Object)
			case api.Deleted:
				c.remove(ctx, ev.Object.Metadata.Name)
			}
		}
	}
}

// apply serves a definition, or updates how it is served.
func (c *Controller) apply(ctx context.Context, obj *api.Object) {
	d, err := Parse(obj)
	if err != nil || len(d.Validate(nil)) > 0 {
		c.tracer.Printf(narrate.HTTP, "crd %s: not served: invalid", obj.Metadata.Name)
		return
	}
	spec := obj.Get("spec")
	cur, ok := c.served[d.Name]
	switch {
	case ok && cur.uid == d.UID && jsonEqual(cur.spec, spec):
		// The same spec, maybe written in another order: kube-apiserver
		// compares specs semantically (updateCustomResourceDefinition),
		// and keeps its storage, watch caches and watches.
		return
	case ok && cur.uid == d.UID && cur.gr == d.GroupResource():
		if err := c.host.Update(ctx, d.Resources()); err != nil {
			c.tracer.Printf(narrate.HTTP, "crd %s: update: %v", d.Name, err)
			return
		}
		c.served[d.Name] = served{uid: d.UID, gr: d.GroupResource(), spec: bytes.Clone(spec)}
		c.tracer.Printf(narrate.HTTP, "crd %s: %s updated", d.Name, d.GroupResource())
		return
	case ok:
		c.remove(ctx, d.Name) // a new definition of the same name
	}
	if err := c.host.Install(ctx, d.Resources()); err != nil {
		c.tracer.Printf(narrate.HTTP, "crd %s: install: %v", d.Name, err)
		return
	}
	c.served[d.Name] = served{uid: d.UID, gr: d.GroupResource(), spec: bytes.Clone(spec)}
	c.tracer.Printf(narrate.HTTP, "crd %s: serving %s", d.Name, d.GroupResource())
}

// remove stops serving a definition's resource and deletes its objects.
func (c *Controller) remove(ctx context.Context, name string) {
	cur, ok := c.served[name]
	if !ok {
		return
	}
	delete(c.served, name)
	if err := c.host.Uninstall(ctx, cur.gr); err != nil && !errors.Is(err, context.Canceled) {
		c.tracer.Printf(narrate.HTTP, "crd %s: uninstall: %v", name, err)
		return
	}
	c.tracer.Printf(narrate.HTTP, "crd %s: %s no longer served, its objects deleted", name, cur.gr)
}
