package informer

import (
	"errors"
	"fmt"

	"listwatch/api"
	"listwatch/fifo"
)

// ProcessDeltas applies what one Pop handed over to cache and calls h for
// each change, synchronously, oldest delta first: client-go's processDeltas
// and processReplacedAllInfo (tools/cache/controller.go). The informer
// calls it with a handler that fans out to its listeners; called directly
// with a plain handler, it is a non-shared informer's process function,
// where the handler runs while the cache holds exactly what it was told.
//
// Per delta type:
//   - Added, Updated, Replaced, Sync: store the object; OnUpdate(old, new)
//     if the key was cached, else OnAdd(new, isInInitialList).
//   - Deleted: remove the key; OnDelete with the object or tombstone.
//   - ReplacedAll: see replaceAll.
//   - SyncAll: OnUpdate(obj, obj) for every cached object.
//   - Bookmark: record the resourceVersion in the cache.
//
// An error on one delta does not stop the others; all are returned joined.
func ProcessDeltas(cache *Indexer, h ResourceEventHandler, deltas fifo.Deltas, isInInitialList bool) error {
	var errs []error
	for _, d := range deltas {
		switch d.Type {
		case fifo.Sync, fifo.Replaced, fifo.Added, fifo.Updated:
			obj, ok := d.Object.(*api.Object)
			if !ok || obj == nil {
				errs = append(errs, fmt.Errorf("informer: %s delta carries %T, not an object", d.Type, d.Object))
				continue
			}
			if old, exists := cache.Get(obj); exists {
				if err := cache.Update(obj); err != nil {
					errs = append(errs, err) // still cached; tell the handler
				}
				h.OnUpdate(old, obj)
			} else {
				if err := cache.Add(obj); err != nil {
					errs = append(errs, err)
				}
				h.OnAdd(obj, isInInitialList)
			}
		case fifo.Deleted:
			switch o := d.Object.(type) {
			case *api.Object:
				if err := cache.Delete(o); err != nil {
					errs = append(errs, err)
					continue
				}
			case fifo.DeletedFinalStateUnknown:
				cache.deleteKey(o.Key)
			default:
				errs = append(errs, fmt.Errorf("informer: Deleted delta carries %T", d.Object))
				continue
			}
			h.OnDelete(d.Object)
		case fifo.ReplacedAll:
			info, ok := d.Object.(fifo.ReplacedAllInfo)
			if !ok {
				errs = append(errs, fmt.Errorf("informer: ReplacedAll delta carries %T", d.Object))
				continue
			}
			if err := replaceAll(cache, h, info, isInInitialList); err != nil {
				errs = append(errs, err)
			}
		case fifo.SyncAll:
			// Every cached object as an update from itself to itself: the
			// same resourceVersion marks it a resync.
			for _, obj := range cache.List() {
				h.OnUpdate(obj, obj)
			}
		case fifo.Bookmark:
			info, ok := d.Object.(fifo.BookmarkInfo)
			if !ok {
				errs = append(errs, fmt.Errorf("informer: Bookmark delta carries %T", d.Object))
				continue
			}
			cache.Bookmark(info.ResourceVersion)
		default:
			errs = append(errs, fmt.Errorf("informer: unknown delta type %q", d.Type))
		}
	}
	return errors.Join(errs...)
}

// replaceAll applies a ReplacedAll delta as client-go's
// processReplacedAllInfo does: work out, against the cache as it is now
// (every earlier delta applied), which cached keys the list lacks and what
// each listed object replaces; swap the cache's content for the list in
// one step; then call h, every deletion first (as a tombstone, since its
// final state was missed), then each listed object in list order, as an
// update of the cached one or an add. So whatever h reads in the cache
// during those calls is the list: a state the server really had, at the
// list's resourceVersion.
func replaceAll(cache *Indexer, h ResourceEventHandler, info fifo.ReplacedAllInfo, isInInitialList bool) error {
	listed := make(map[string]bool, len(info.Objects))
	for _, obj := range info.Objects {
		if obj != nil {
			listed[obj.Key()] = true
		}
	}
	var deletions []fifo.DeletedFinalStateUnknown
	for _, key := range cache.ListKeys() {
		if !listed[key] {
			cached, _ := cache.GetByKey(key)
			deletions = append(deletions, fifo.DeletedFinalStateUnknown{Key: key, Obj: cached})
		}
	}
	olds := make([]*api.Object, len(info.Objects))
	for i, obj := range info.Objects {
		if obj != nil {
			olds[i], _ = cache.GetByKey(obj.Key())
		}
	}
	if err := cache.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err // a list the Indexer refuses whole: nothing changed, nobody told
	}
	for _, ts := range deletions {
		h.OnDelete(ts)
	}
	for i, obj := range info.Objects {
		if olds[i] != nil {
			h.OnUpdate(olds[i], obj)
		} else {
			h.OnAdd(obj, isInInitialList)
		}
	}
	return nil
}
