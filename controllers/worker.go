package controllers

import (
	"context"
	"sync"

	"listwatch/api"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/workqueue"
)

// ReconcileFunc makes the world match what the object under key asks for.
// It must read the object from the informer's cache, never from the event
// that queued the key: that is what makes a controller level-triggered
// (it acts on the state, so a lost or merged event changes nothing). An
// error retries the key with backoff.
type ReconcileFunc func(ctx context.Context, key string) error

// RunWorkers runs n workers taking keys from q until ctx ends, then shuts
// q down and waits for them. Each worker reconciles one key at a time;
// the queue guarantees no two workers hold the same key. Success forgets
// the key's failures; failure adds it back rate-limited.
func RunWorkers[T comparable](ctx context.Context, name string, q workqueue.RateLimitingInterface[T], n int, reconcile func(context.Context, T) error, tr *narrate.Tracer) {
	var wg sync.WaitGroup
	for range max(n, 1) {
		wg.Go(func() {
			for processNext(ctx, name, q, reconcile, tr) {
			}
		})
	}
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
}

func processNext[T comparable](ctx context.Context, name string, q workqueue.RateLimitingInterface[T], reconcile func(context.Context, T) error, tr *narrate.Tracer) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	if err := reconcile(ctx, key); err != nil {
		if ctx.Err() != nil {
			return true // stopping: the error is the cancellation
		}
		tr.Printf(narrate.Controller, "%s: reconcile %v failed, retrying: %v", name, key, err)
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	return true
}

// EnqueueHandler is the event handler of a controller's primary resource:
// every add, update and delete queues the object's key, and nothing else.
// What changed does not matter; the reconcile reads the cache.
func EnqueueHandler(q workqueue.Interface[string]) informer.ResourceEventHandler {
	return informer.ResourceEventHandlerFuncs{
		AddFunc:    func(obj *api.Object, _ bool) { q.Add(obj.Key()) },
		UpdateFunc: func(_, obj *api.Object) { q.Add(obj.Key()) },
		DeleteFunc: func(obj any) {
			if o := informer.ObjectOf(obj); o != nil {
				q.Add(o.Key())
			}
		},
	}
}

// EnqueueOwnerHandler is the event handler of a resource a controller
// owns: every add, update and delete of an object controlled by an owner
// of kind in apiVersion queues the owner's key (OwnerKey), so a child
// changed or deleted by someone else is put right.
func EnqueueOwnerHandler(q workqueue.Interface[string], apiVersion, kind string) informer.ResourceEventHandler {
	owned := func(obj *api.Object) {
		if obj == nil {
			return
		}
		if key, ok := OwnerKey(obj, apiVersion, kind); ok {
			q.Add(key)
		}
	}
	return informer.ResourceEventHandlerFuncs{
		AddFunc:    func(obj *api.Object, _ bool) { owned(obj) },
		UpdateFunc: func(_, obj *api.Object) { owned(obj) },
		DeleteFunc: func(obj any) { owned(informer.ObjectOf(obj)) },
	}
}

// OwnerKey returns the queue key of obj's controlling owner if it is of
// kind in apiVersion: "namespace/name" (owners are in their dependents'
// namespace).
func OwnerKey(obj *api.Object, apiVersion, kind string) (string, bool) {
	ref, ok := ControllerOf(obj)
	if !ok || ref.Kind != kind || ref.APIVersion != apiVersion {
		return "", false
	}
	if obj.Metadata.Namespace == "" {
		return ref.Name, true
	}
	return obj.Metadata.Namespace + "/" + ref.Name, true
}
