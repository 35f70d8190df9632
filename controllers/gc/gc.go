package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/workqueue"
)

// OwnerIndex indexes every object under the UID of each of its owners, so
// that an owner's deletion finds its dependents with one lookup.
const OwnerIndex = "byOwnerUID"

func ownerIndexFunc(obj *api.Object) ([]string, error) {
	refs, err := controllers.OwnerReferences(obj)
	if err != nil {
		return nil, err
	}
	uids := make([]string, 0, len(refs))
	for _, r := range refs {
		uids = append(uids, r.UID)
	}
	return uids, nil
}

// Resource is one kind the collector watches: both as a possible owner and
// as a possible dependent.
type Resource struct {
	GVR        api.GroupVersionResource
	Kind       string
	Namespaced bool
	// Informer watches GVR in every namespace. New adds OwnerIndex to it,
	// so it must not have started yet.
	Informer *informer.SharedIndexInformer
}

// Options configures a Collector.
type Options struct {
	// Client deletes dependents and looks owners up.
	Client    *client.Client
	Resources []Resource
	// Discover, if set, makes the collector watch every resource the
	// server serves besides Resources (discovery.go).
	Discover *Discovery
	controllers.Settings
}

// item is one object to look at: which resource, which key.
type item struct {
	res int
	key string
}

// Collector deletes objects all of whose owners are gone.
type Collector struct {
	opts  Options
	queue *workqueue.RateLimitingQueue[item]
	regs  []informer.ResourceEventHandlerRegistration // of Options.Resources

	mu sync.RWMutex
	// res are the watched resources, Options.Resources first, then the
	// discovered ones; an item names one by its index. A discovered
	// resource the server stopped serving keeps its slot, gone.
	res    []Resource
	regOf  map[int]informer.ResourceEventHandlerRegistration // the handler on res[i]
	gone   map[int]bool
	byKind map[string]int // "apps/v1/Deployment" → index in res
}

// New builds a collector, adds OwnerIndex to every informer and registers
// its handlers.
func New(opts Options) (*Collector, error) {
	if opts.Client == nil || len(opts.Resources) == 0 {
		return nil, errors.New("gc: Options needs Client and Resources")
	}
	opts.Settings = opts.Settings.WithDefaults()
	g := &Collector{
		opts:   opts,
		queue:  controllers.NewQueue[item]("gc", opts.Settings),
		gone:   map[int]bool{},
		regOf:  map[int]informer.ResourceEventHandlerRegistration{},
		byKind: map[string]int{},
	}
	for _, r := range opts.Resources {
		reg, err := g.add(r)
		if err != nil {
			g.queue.ShutDown() // its timer goroutine would outlive the failed New
			return nil, err
		}
		g.regs = append(g.regs, reg)
	}
	return g, nil
}

// add starts collecting r: OwnerIndex on its informer, which must not have
// started yet, and the collector's handler.
func (g *Collector) add(r Resource) (informer.ResourceEventHandlerRegistration, error) {
	if err := r.Informer.AddIndexers(informer.Indexers{OwnerIndex: ownerIndexFunc}); err != nil {
		return nil, fmt.Errorf("gc: %s: %w", r.GVR.Resource, err)
	}
	g.mu.Lock()
	i := len(g.res)
	g.res = append(g.res, r)
	g.byKind[r.GVR.APIVersion()+"/"+r.Kind] = i
	g.mu.Unlock()
	reg, err := r.Informer.AddEventHandlerWithOptions(g.handler(i), informer.HandlerOptions{Name: "garbage-collector"})
	if err != nil {
		return nil, fmt.Errorf("gc: %s: %w", r.GVR.Resource, err)
	}
	g.mu.Lock()
	g.regOf[i] = reg
	g.mu.Unlock()
	return reg, nil
}

// hasSynced reports whether every watched resource's cache, and the
// collector's handler on it, has synced: only then are an owner's
// dependents all in the caches.
func (g *Collector) hasSynced() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for i, r := range g.res {
		if g.gone[i] {
			continue
		}
		if reg, ok := g.regOf[i]; !ok || !reg.HasSynced() || !r.Informer.HasSynced() {
			return false
		}
	}
	return true
}

// resource returns the watched resource i, unless it is gone.
func (g *Collector) resource(i int) (Resource, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if i < 0 || i >= len(g.res) || g.gone[i] {
		return Resource{}, false
	}
	return g.res[i], true
}

// resources returns the watched resources that are not gone, by index.
func (g *Collector) resources() map[int]Resource {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make(map[int]Resource, len(g.res))
	for i, r := range g.res {
		if !g.gone[i] {
			out[i] = r
		}
	}
	return out
}

// resourceOf finds the watched resource of an owner reference's apiVersion
// and kind.
func (g *Collector) resourceOf(apiVersion, kind string) (int, Resource, bool) {
	g.mu.RLock()
	i, ok := g.byKind[apiVersion+"/"+kind]
	if !ok && !strings.Contains(apiVersion, "/") { // core group: "v1"
		i, ok = g.byKind["v1/"+kind]
	}
	g.mu.RUnlock()
	if !ok {
		return 0, Resource{}, false
	}
	r, ok := g.resource(i)
	return i, r, ok
}

// handler queues an object when it has owners (they may be gone already),
// and every dependent of an object that was deleted.
func (g *Collector) handler(i int) informer.ResourceEventHandler {
	queueIfOwned := func(obj *api.Object) {
		if refs, _ := controllers.OwnerReferences(obj); len(refs) > 0 {
			g.queue.Add(item{i, obj.Key()})
		}
	}
	return informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, _ bool) {
			queueIfOwned(obj)
			g.queueIfFinalizing(i, obj)
		},
		UpdateFunc: func(old, obj *api.Object) {
			if old.Metadata.UID != obj.Metadata.UID {
				// Deleted and re-created under the same name while the
				// informer was not watching: a re-list shows that as an
				// update of the key, but the old object is gone, and so
				// may be whatever it owned. (The chaos run found this.)
				g.queueDependents(old)
			}
			queueIfOwned(obj)
			g.queueIfFinalizing(i, obj)
			g.queueOwnersDeletingDependents(old)
			g.queueOwnersDeletingDependents(obj)
		},
		DeleteFunc: func(obj any) {
			o := informer.ObjectOf(obj)
			g.queueDependents(o)
			g.queueOwnersDeletingDependents(o)
		},
	}
}

// queueDependents queues every object in any cache that o owns.
func (g *Collector) queueDependents(o *api.Object) {
	for _, d := range g.dependents(o) {
		g.queue.Add(item{d.res, d.obj.Key()})
	}
}

// dependent is an object of resource res that some owner owns.
type dependent struct {
	res int
	obj *api.Object
}

// dependents lists the cached objects that o owns, in every cache.
func (g *Collector) dependents(o *api.Object) []dependent {
	if o == nil || o.Metadata.UID == "" {
		return nil
	}
	var out []dependent
	for j, r := range g.resources() {
		objs, err := r.Informer.GetIndexer().ByIndex(OwnerIndex, o.Metadata.UID)
		if err != nil {
			continue
		}
		for _, d := range objs {
			out = append(out, dependent{j, d})
		}
	}
	return out
}

// Run waits for every cache, then collects until ctx ends.
func (g *Collector) Run(ctx context.Context) {
	var synced []informer.Syncable
	for i, r := range g.opts.Resources {
		synced = append(synced, r.Informer, g.regs[i])
	}
	if !informer.WaitForCacheSync(ctx, synced...) {
		g.queue.ShutDown()
		return
	}
	var wg sync.WaitGroup
	if g.opts.Discover != nil {
		wg.Go(func() { g.discover(ctx) })
	}
	controllers.RunWorkers(ctx, "gc", g.queue, g.opts.Workers, g.reconcile, g.opts.Tracer)
	wg.Wait()
}

// Queue exposes the work queue's metrics.
func (g *Collector) Queue() workqueue.Metrics { return g.queue.Metrics() }

func (g *Collector) reconcile(ctx context.Context, it item) error {
	res, ok := g.resource(it.res)
	if !ok {
		return nil
	}
	obj, ok := res.Informer.GetIndexer().GetByKey(it.key)
	if !ok {
		return nil
	}
	if obj.Metadata.DeletionTimestamp != nil {
		return g.finalize(ctx, res, obj) // propagation.go
	}
	refs, err := controllers.OwnerReferences(obj)
	if err != nil || len(refs) == 0 {
		return nil // unreadable references are left alone, never guessed at
	}
	var owners classified
	unobserved := ""
	for _, ref := range refs {
		o, err := g.ownerExists(ctx, obj, ref)
		if err != nil {
			return err
		}
		switch o {
		case ownerGone:
			owners.dangling = append(owners.dangling, ref)
		case ownerDeletingDependents:
			owners.waiting = append(owners.waiting, ref)
		case ownerOnServerOnly:
			unobserved = ref.Kind + " " + ref.Name
			fallthrough
		default:
			owners.alive = append(owners.alive, ref)
		}
	}
	if err := g.collect(ctx, res, it.key, obj, refs, owners); err != nil {
		return err
	}
	if unobserved != "" {
		return fmt.Errorf("gc: %s %s: owner %s: %w", res.GVR.Resource, it.key, unobserved, errOwnerNotObserved)
	}
	return nil
}

// classified are an object's owner references by what became of their
// owners (classifyReferences in Kubernetes' collector).
type classified struct {
	// alive owners exist and are not deleting their dependents first.
	alive []controllers.OwnerReference
	// dangling owners are gone.
	dangling []controllers.OwnerReference
	// waiting owners are being deleted in the foreground: they wait for
	// their dependents to go first.
	waiting []controllers.OwnerReference
}

// collect deletes obj when all its owners are gone or waiting for it to
// go, or removes the references to those owners when some other remains
// (attemptToDeleteItem in pkg/controller/garbagecollector/garbagecollector.go).
func (g *Collector) collect(ctx context.Context, res Resource, key string, obj *api.Object, refs []controllers.OwnerReference, owners classified) error {
	rc := g.opts.Client.Resource(res.GVR).Namespace(obj.Metadata.Namespace)
	switch {
	case len(owners.dangling) == 0 && len(owners.waiting) == 0:
		return nil
	case len(owners.alive) != 0:
		// Some owners remain: only the references to the others go.
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"ownerReferences": owners.alive, "resourceVersion": obj.Metadata.ResourceVersion,
		}})
		if err != nil {
			return err
		}
		if _, err := rc.Patch(ctx, obj.Metadata.Name, client.PatchTypeMerge, patch); err != nil && !client.IsNotFound(err) {
			return fmt.Errorf("gc: removing dangling owners of %s %s: %w", res.GVR.Resource, key, err)
		}
		g.opts.Tracer.Printf(narrate.Controller, "gc: %s %s: removed %d owner reference(s) to gone or deleting owners", res.GVR.Resource, key, len(owners.dangling)+len(owners.waiting))
		return nil
	}
	policy, err := g.dependentPolicy(ctx, rc, obj, owners)
	if err != nil {
		return fmt.Errorf("gc: %s %s: %w", res.GVR.Resource, key, err)
	}
	err = deleteDependent(ctx, rc, obj, refs, policy)
	if err != nil && !client.IsNotFound(err) && !client.IsConflict(err) {
		return fmt.Errorf("gc: deleting %s %s: %w", res.GVR.Resource, key, err)
	}
	why := "is gone"
	if len(owners.dangling) == 0 {
		why = "is deleting its dependents first"
		owners.dangling = owners.waiting
	}
	g.opts.Tracer.Printf(narrate.Controller, "gc: %s %s: owner %s %s %s: deleted (%s)", res.GVR.Resource, key, owners.dangling[0].Kind, owners.dangling[0].Name, why, policy)
	return nil
}

// deleteDependent deletes obj, whose owners are all gone, at the
// resourceVersion its owner references were read at, as Kubernetes' garbage
// collector does (deleteObject in pkg/controller/garbagecollector/operations.go).
// A controller may have adopted it meanwhile: a Website deleted and created
// again under the same name points its old Deployment at itself. That
// update changed the resourceVersion, so the delete fails with 409 Conflict
// instead of removing a live owner's child; the update's event queues obj
// again, to be looked at with its new owners. If obj changed but its owner
// references did not, it is deleted at whatever resourceVersion it has, so
// that unrelated updates (a status every second) cannot keep it alive.
func deleteDependent(ctx context.Context, rc *client.ResourceClient, obj *api.Object, refs []controllers.OwnerReference, policy string) error {
	pre := &client.Preconditions{UID: obj.Metadata.UID, ResourceVersion: obj.Metadata.ResourceVersion}
	opts := client.DeleteOptions{Preconditions: pre, PropagationPolicy: policy}
	err := rc.Delete(ctx, obj.Metadata.Name, opts)
	if !client.IsConflict(err) || pre.ResourceVersion == "" {
		return err
	}
	live, err := rc.Get(ctx, obj.Metadata.Name)
	if err != nil {
		return err
	}
	liveRefs, _ := controllers.OwnerReferences(live)
	if live.Metadata.UID != obj.Metadata.UID || !reflect.DeepEqual(liveRefs, refs) {
		return nil // re-created or adopted: its own event queues it again
	}
	pre.ResourceVersion = ""
	return rc.Delete(ctx, obj.Metadata.Name, opts)
}

// ownerState is what the collector knows of one owner.
type ownerState int

const (
	// ownerInCache: the owner's informer has it, with the referenced UID.
	ownerInCache ownerState = iota
	// ownerOnServerOnly: the informer does not have it, the server does.
	ownerOnServerOnly
	// ownerGone: the server has no object of that name and UID.
	ownerGone
	// ownerDeletingDependents: the owner exists, being deleted in the
	// foreground (deletionTimestamp and the foregroundDeletion finalizer).
	ownerDeletingDependents
)

// errOwnerNotObserved asks for the dependent to be looked at again: one of
// its owners exists on the server but its informer has not delivered it.
// Only an owner the informer has seen tells the collector of its deletion
// (its delete event, or a re-list's tombstone, queues its dependents). An
// owner created and deleted while the informer was away (a watch cut, a
// re-list that already lacks it) is never seen at all: nothing would queue
// its dependents, and they would be left orphaned for good. So, as
// Kubernetes' collector requeues a "virtual" owner node until an informer
// event has observed it (attemptToDeleteWorker in
// pkg/controller/garbagecollector/garbagecollector.go: "requeue if item
// hasn't been observed via an informer event yet"), the dependent is
// retried with backoff until the owner reaches the cache, or the server
// says it is gone and the dependent is collected.
var errOwnerNotObserved = errors.New("exists on the server but not yet in the informer's cache: looking again")

// ownerExists looks ref up in the owner's cache and, when the cache does
// not have it, on the server: a cache that has not caught up must never
// get a live object's dependents deleted. Owners of kinds the collector
// does not watch are assumed to exist.
func (g *Collector) ownerExists(ctx context.Context, dep *api.Object, ref controllers.OwnerReference) (ownerState, error) {
	_, r, ok := g.resourceOf(ref.APIVersion, ref.Kind)
	if !ok {
		return ownerInCache, nil // not watched: nobody will tell of its deletion either
	}
	ns := ""
	if r.Namespaced {
		ns = dep.Metadata.Namespace
	}
	if o, ok := r.Informer.GetIndexer().GetByKey(objectKey(ns, ref.Name)); ok && o.Metadata.UID == ref.UID {
		if deletingDependents(o) {
			return ownerDeletingDependents, nil
		}
		return ownerInCache, nil
	}
	o, err := g.opts.Client.Resource(r.GVR).Namespace(ns).Get(ctx, ref.Name)
	switch {
	case client.IsNotFound(err):
		return ownerGone, nil
	case err != nil:
		return ownerGone, fmt.Errorf("gc: looking up owner %s %s: %w", ref.Kind, ref.Name, err)
	case o.Metadata.UID != ref.UID:
		return ownerGone, nil
	case deletingDependents(o):
		return ownerDeletingDependents, nil
	}
	return ownerOnServerOnly, nil
}

// objectKey is an informer's key of the object name in namespace ns.
func objectKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
