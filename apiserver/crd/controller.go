package crd

import (
	"bytes"
	"context"
	"errors"
	"time"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/internal/clock"
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
	// one DELETED per object, then their end. One that fails is called
	// again, and until one succeeds the Controller counts gr as served:
	// it does not Install it anew meanwhile.
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
	// clock times Run's pauses; tests substitute a clock.Fake.
	clock  clock.Clock
	served map[string]served // by definition name
	// retry is set when a definition could not be served, uninstalled, or
	// its status written for a reason other than a change meanwhile: Run
	// lists again, after a pause.
	retry bool
	// opened is the watch Open opened, for Run to follow first.
	opened store.Watcher
}

// NewController returns a controller; Sync it once, Open its watch, then
// Run it.
func NewController(st store.Interface, host Host, tr *narrate.Tracer) *Controller {
	return &Controller{store: st, host: host, tracer: tr, clock: clock.Real{}, served: map[string]served{}}
}

// Sync lists the definitions and serves exactly those. It returns the
// revision it listed at, to watch from; one it could not serve or mark
// is tried again by Run.
func (c *Controller) Sync(ctx context.Context) (int64, error) {
	res, err := c.store.List(ctx, Prefix, store.ListOptions{})
	if err != nil {
		return 0, err
	}
	c.retry = false
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

// Retry pauses: after a failure of any kind (the watch could not be
// opened, the list failed, or a definition could not be served,
// uninstalled or marked) the Controller lists again after retryPause,
// doubling up to maxRetryPause while failures follow one another. The
// pause is back to retryPause only once a Sync has succeeded with nothing
// left to retry and the watch from its revision has opened. The
// establishing controller of kube-apiserver retries a failed status write
// through its workqueue's rate limiter, which backs off per definition
// from 5 ms to 1000 s (k8s.io/client-go v0.37.2
// util/workqueue/default_rate_limiters.go,
// DefaultTypedControllerRateLimiter); ours backs off the whole list.
const (
	retryPause    = 100 * time.Millisecond
	maxRetryPause = 10 * time.Second
)

// Run follows the store until ctx ends, re-syncing whenever its watch
// ends, and after a failure: the watch is then left, and the definitions
// listed again, after growing pauses, until a Sync leaves nothing to
// retry.
func (c *Controller) Run(ctx context.Context, from int64) {
	defer func() {
		if c.opened != nil { // ctx ended before Run followed it
			c.opened.Stop()
			c.opened = nil
		}
	}()
	pause := retryPause
	failed := c.retry // the Sync before Run left something to retry
	for ctx.Err() == nil {
		if !failed {
			var opened bool
			from, opened = c.watch(ctx, from)
			if ctx.Err() != nil {
				return
			}
			if opened {
				pause = retryPause
			}
			failed = !opened || c.retry
		}
		if failed {
			if !c.sleep(ctx, pause) {
				return
			}
			pause = min(2*pause, maxRetryPause)
		}
		rev, err := c.Sync(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.tracer.Printf(narrate.HTTP, "crd: listing definitions: %v", err)
			}
			failed = true
			continue
		}
		from, failed = rev, c.retry
	}
}

// Open opens the watch Run follows first, from the revision Sync listed
// at, so that a server which has started is already following its
// definitions (kube-apiserver is not ready until its definitions'
// informer has synced: the "crd-informer-synced" post-start hook,
// k8s.io/apiextensions-apiserver v0.37.2 pkg/apiserver/apiserver.go).
// ctx must be the one Run is given. If it fails, Run opens it itself.
func (c *Controller) Open(ctx context.Context, from int64) error {
	w, err := c.store.Watch(ctx, Prefix, from)
	if err != nil {
		return err
	}
	c.opened = w
	return nil
}

// watch follows the store from revision from until the watch ends or a
// definition could not be served, uninstalled or marked. It returns the
// revision to watch from next, and whether the watch could be opened.
func (c *Controller) watch(ctx context.Context, from int64) (int64, bool) {
	w := c.opened // once: a later watch is opened here
	c.opened = nil
	var err error
	if w == nil {
		w, err = c.store.Watch(ctx, Prefix, from)
	}
	if err != nil {
		if ctx.Err() == nil {
			c.tracer.Printf(narrate.HTTP, "crd: watching definitions: %v", err)
		}
		return from, false
	}
	defer w.Stop()
	return c.follow(ctx, w, from), true
}

// sleep waits for d on the Controller's clock, and reports false if ctx
// ended first.
func (c *Controller) sleep(ctx context.Context, d time.Duration) bool {
	t := c.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// follow applies the events of w until it ends, or until a definition
// could not be served, uninstalled or marked, and returns the revision to
// watch from.
func (c *Controller) follow(ctx context.Context, w store.Watcher, from int64) int64 {
	for !c.retry {
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
	return from
}

// apply serves a definition, or updates how it is served: it accepts the
// names of a new one, installs its resource, and then marks it
// established (status.go), so that a client that sees Established finds
// the resource served and listed in discovery.
func (c *Controller) apply(ctx context.Context, obj *api.Object) {
	d, err := Parse(obj)
	if err != nil || len(d.Validate(nil)) > 0 {
		c.tracer.Printf(narrate.HTTP, "crd %s: not served: invalid", obj.Metadata.Name)
		return
	}
	if !namesAccepted(obj, d) {
		if obj, err = c.acceptNames(ctx, d); err != nil {
			c.failed(d, "accepting names", err)
			return
		}
	}
	if !c.serve(ctx, d, obj.Get("spec")) {
		c.retry = true
		return
	}
	// As kube-apiserver's establishing controller, only a definition whose
	// names are accepted (and then, not again).
	if conditionTrue(obj, condNamesAccepted) && !conditionTrue(obj, condEstablished) {
		if err := c.establish(ctx, d); err != nil {
			c.failed(d, "establishing", err)
			return
		}
		c.tracer.Printf(narrate.HTTP, "crd %s: established", d.Name)
	}
}

// failed notes a status write that failed. A definition deleted or
// replaced meanwhile needs nothing more (its next event comes); any other
// failure is tried again.
func (c *Controller) failed(d *Definition, what string, err error) {
	c.tracer.Printf(narrate.HTTP, "crd %s: %s: %v", d.Name, what, err)
	if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
		c.retry = true
	}
}

// serve installs a definition's resource, or updates how it is served,
// and reports whether it is served as the definition says.
func (c *Controller) serve(ctx context.Context, d *Definition, spec []byte) bool {
	cur, ok := c.served[d.Name]
	switch {
	case ok && cur.uid == d.UID && jsonEqual(cur.spec, spec):
		// The same spec, maybe written in another order: kube-apiserver
		// compares specs semantically (updateCustomResourceDefinition),
		// and keeps its storage, watch caches and watches.
		return true
	case ok && cur.uid == d.UID && cur.gr == d.GroupResource():
		if err := c.host.Update(ctx, d.Resources()); err != nil {
			c.tracer.Printf(narrate.HTTP, "crd %s: update: %v", d.Name, err)
			return false
		}
		c.served[d.Name] = served{uid: d.UID, gr: d.GroupResource(), spec: bytes.Clone(spec)}
		c.tracer.Printf(narrate.HTTP, "crd %s: %s updated", d.Name, d.GroupResource())
		return true
	case ok:
		if !c.remove(ctx, d.Name) { // a new definition of the same name
			return false // the old resource is still served: Install would fail
		}
	}
	if err := c.host.Install(ctx, d.Resources()); err != nil {
		c.tracer.Printf(narrate.HTTP, "crd %s: install: %v", d.Name, err)
		return false
	}
	c.served[d.Name] = served{uid: d.UID, gr: d.GroupResource(), spec: bytes.Clone(spec)}
	c.tracer.Printf(narrate.HTTP, "crd %s: serving %s", d.Name, d.GroupResource())
	return true
}

// remove stops serving a definition's resource and deletes its objects,
// and reports whether it did. One whose Uninstall failed stays in served,
// to be removed again by the next Sync (the definition is gone, or is a
// new one of the same name): forgetting it would leave its resource
// served, and every Install of that name refused. kube-apiserver's
// customresourcecleanup finalizer likewise keeps a definition whose
// objects it could not delete, and tries again through its workqueue
// (k8s.io/apiextensions-apiserver v0.37.2
// pkg/controller/finalizer/crd_finalizer.go, sync).
func (c *Controller) remove(ctx context.Context, name string) bool {
	cur, ok := c.served[name]
	if !ok {
		return true
	}
	if err := c.host.Uninstall(ctx, cur.gr); err != nil {
		c.tracer.Printf(narrate.HTTP, "crd %s: uninstall: %v", name, err)
		c.retry = true
		return false
	}
	delete(c.served, name)
	c.tracer.Printf(narrate.HTTP, "crd %s: %s no longer served, its objects deleted", name, cur.gr)
	return true
}
