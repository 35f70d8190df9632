package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

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
	controllers.Settings
}

// item is one object to look at: which resource, which key.
type item struct {
	res int
	key string
}

// Collector deletes objects all of whose owners are gone.
type Collector struct {
	opts   Options
	queue  *workqueue.RateLimitingQueue[item]
	byKind map[string]int // "apps/v1/Deployment" → index in Resources
	regs   []informer.ResourceEventHandlerRegistration
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
		byKind: map[string]int{},
	}
	for i, r := range opts.Resources {
		g.byKind[r.GVR.APIVersion()+"/"+r.Kind] = i
		if err := r.Informer.AddIndexers(informer.Indexers{OwnerIndex: ownerIndexFunc}); err != nil {
			g.queue.ShutDown() // its timer goroutine would outlive the failed New
			return nil, fmt.Errorf("gc: %s: %w", r.GVR.Resource, err)
		}
		reg, err := r.Informer.AddEventHandlerWithOptions(g.handler(i), informer.HandlerOptions{Name: "garbage-collector"})
		if err != nil {
			g.queue.ShutDown() // its timer goroutine would outlive the failed New
			return nil, fmt.Errorf("gc: %s: %w", r.GVR.Resource, err)
		}
		g.regs = append(g.regs, reg)
	}
	return g, nil
}

// handler queues an object when it has owners (they may be gone already),
// and every dependent of an object that was deleted.
func (g *Collector) handler(i int) informer.ResourceEventHandler {
	queueIfOwned := func(obj *api.Object) {
		if refs, _ := controllers.OwnerReferences(obj); len(refs) > 0 {
			g.queue.Add(item{i, obj.Key()})
		}
	}
	queueDependents := func(o *api.Object) {
		if o == nil || o.Metadata.UID == "" {
			return
		}
		for j, r := range g.opts.Resources {
			keys, err := r.Informer.GetIndexer().IndexKeys(OwnerIndex, o.Metadata.UID)
			if err != nil {
				continue
			}
			for _, k := range keys {
				g.queue.Add(item{j, k})
			}
		}
	}
	return informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, _ bool) { queueIfOwned(obj) },
		UpdateFunc: func(old, obj *api.Object) {
			if old.Metadata.UID != obj.Metadata.UID {
				// Deleted and re-created under the same name while the
				// informer was not watching: a re-list shows that as an
				// update of the key, but the old object is gone, and so
				// may be whatever it owned. (The chaos run found this.)
				queueDependents(old)
			}
			queueIfOwned(obj)
		},
		DeleteFunc: func(obj any) { queueDependents(informer.ObjectOf(obj)) },
	}
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
	controllers.RunWorkers(ctx, "gc", g.queue, g.opts.Workers, g.reconcile, g.opts.Tracer)
}

// Queue exposes the work queue's metrics.
func (g *Collector) Queue() workqueue.Metrics { return g.queue.Metrics() }

func (g *Collector) reconcile(ctx context.Context, it item) error {
	res := g.opts.Resources[it.res]
	obj, ok := res.Informer.GetIndexer().GetByKey(it.key)
	if !ok || obj.Metadata.DeletionTimestamp != nil {
		return nil
	}
	refs, err := controllers.OwnerReferences(obj)
	if err != nil || len(refs) == 0 {
		return nil // unreadable references are left alone, never guessed at
	}
	var alive, dangling []controllers.OwnerReference
	unobserved := ""
	for _, ref := range refs {
		o, err := g.ownerExists(ctx, obj, ref)
		if err != nil {
			return err
		}
		switch o {
		case ownerGone:
			dangling = append(dangling, ref)
		case ownerOnServerOnly:
			unobserved = ref.Kind + " " + ref.Name
			fallthrough
		default:
			alive = append(alive, ref)
		}
	}
	if err := g.collect(ctx, res, it.key, obj, refs, alive, dangling); err != nil {
		return err
	}
	if unobserved != "" {
		return fmt.Errorf("gc: %s %s: owner %s: %w", res.GVR.Resource, it.key, unobserved, errOwnerNotObserved)
	}
	return nil
}

// collect deletes obj when all its owners are gone, or removes the
// references to the gone ones when some remain.
func (g *Collector) collect(ctx context.Context, res Resource, key string, obj *api.Object, refs, alive, dangling []controllers.OwnerReference) error {
	rc := g.opts.Client.Resource(res.GVR).Namespace(obj.Metadata.Namespace)
	switch {
	case len(dangling) == 0:
		return nil
	case len(alive) == 0:
		err := deleteDependent(ctx, rc, obj, refs)
		if err != nil && !client.IsNotFound(err) && !client.IsConflict(err) {
			return fmt.Errorf("gc: deleting %s %s: %w", res.GVR.Resource, key, err)
		}
		g.opts.Tracer.Printf(narrate.Controller, "gc: %s %s: owner %s %s is gone: deleted", res.GVR.Resource, key, dangling[0].Kind, dangling[0].Name)
		return nil
	default:
		// Some owners remain: only the references to the gone ones go.
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"ownerReferences": alive, "resourceVersion": obj.Metadata.ResourceVersion,
		}})
		if err != nil {
			return err
		}
		if _, err := rc.Patch(ctx, obj.Metadata.Name, client.PatchTypeMerge, patch); err != nil && !client.IsNotFound(err) {
			return fmt.Errorf("gc: removing dangling owners of %s %s: %w", res.GVR.Resource, key, err)
		}
		g.opts.Tracer.Printf(narrate.Controller, "gc: %s %s: removed %d dangling owner reference(s)", res.GVR.Resource, key, len(dangling))
		return nil
	}
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
func deleteDependent(ctx context.Context, rc *client.ResourceClient, obj *api.Object, refs []controllers.OwnerReference) error {
	pre := &client.Preconditions{UID: obj.Metadata.UID, ResourceVersion: obj.Metadata.ResourceVersion}
	opts := client.DeleteOptions{Preconditions: pre, PropagationPolicy: "Background"}
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
	i, ok := g.byKind[ref.APIVersion+"/"+ref.Kind]
	if !ok {
		if !strings.Contains(ref.APIVersion, "/") { // core group: "v1"
			i, ok = g.byKind["v1/"+ref.Kind]
		}
		if !ok {
			return ownerInCache, nil // not watched: nobody will tell of its deletion either
		}
	}
	r := g.opts.Resources[i]
	ns, key := "", ref.Name
	if r.Namespaced {
		ns, key = dep.Metadata.Namespace, dep.Metadata.Namespace+"/"+ref.Name
	}
	if o, ok := r.Informer.GetIndexer().GetByKey(key); ok && o.Metadata.UID == ref.UID {
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
	}
	return ownerOnServerOnly, nil
}
