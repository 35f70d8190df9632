package informer

import (
	"listwatch/api"
	"listwatch/fifo"
)

// ResourceEventHandler is told what happened to the informer's objects
// (client-go's cache.ResourceEventHandler). Its methods are called one at a
// time, in order, from the handler's own goroutine; they must treat the
// objects as read-only.
type ResourceEventHandler interface {
	// OnAdd: an object appeared. isInInitialList is true for the objects of
	// the first list (and for the synthetic adds a handler registered late
	// receives), false for objects created later.
	OnAdd(obj *api.Object, isInInitialList bool)
	// OnUpdate: an object changed, or, when old and new have the same
	// resourceVersion, a resync or re-list re-delivered it unchanged.
	// Several changes may have been merged into one call.
	OnUpdate(oldObj, newObj *api.Object)
	// OnDelete: an object is gone. obj is the *api.Object as last seen,
	// or a fifo.DeletedFinalStateUnknown when the deletion happened while
	// the informer was not watching and was only noticed at a re-list.
	OnDelete(obj any)
}

// ResourceEventHandlerFuncs adapts plain functions to a
// ResourceEventHandler; nil functions are skipped.
type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj *api.Object, isInInitialList bool)
	UpdateFunc func(oldObj, newObj *api.Object)
	DeleteFunc func(obj any)
}

// OnAdd calls AddFunc if set.
func (f ResourceEventHandlerFuncs) OnAdd(obj *api.Object, isInInitialList bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if set.
func (f ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj *api.Object) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if set.
func (f ResourceEventHandlerFuncs) OnDelete(obj any) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj)
	}
}

// ObjectOf returns the object an OnDelete argument carries: the object
// itself, or a tombstone's last known state (which may be nil).
func ObjectOf(obj any) *api.Object {
	switch o := obj.(type) {
	case *api.Object:
		return o
	case fifo.DeletedFinalStateUnknown:
		return o.Obj
	case *fifo.DeletedFinalStateUnknown:
		if o != nil {
			return o.Obj
		}
	}
	return nil
}
