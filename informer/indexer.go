package informer

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"listwatch/api"
	"listwatch/fifo"
	"listwatch/narrate"
)

// Indexer is the informer's cache: a thread-safe map from "namespace/name"
// keys to the newest object, plus named indexes kept up to date on every
// change. Readers (listers, handlers) get the cached objects themselves:
// they are shared and must be treated as read-only.
//
// It mirrors client-go's tools/cache thread_safe_store.go (threadSafeMap,
// storeIndex), index.go (Indexer, IndexFunc) and store.go (cache). It
// satisfies fifo.KnownObjects, so the queue can ask it which keys exist.
type Indexer struct {
	mu       sync.RWMutex
	items    map[string]*api.Object
	indexers Indexers
	indices  map[string]index // index name → value → keys
	// rv is the resourceVersion of the last list, object or bookmark
	// applied (client-go's threadSafeMap.rv).
	rv string
	tr *narrate.Tracer
}

var _ fifo.KnownObjects = (*Indexer)(nil)

// NewIndexer returns an empty Indexer with these index functions. The
// namespace index (NamespaceIndex) is added unless indexers defines it.
func NewIndexer(indexers Indexers, tr *narrate.Tracer) *Indexer {
	all := Indexers{NamespaceIndex: MetaNamespaceIndexFunc}
	maps.Copy(all, indexers)
	x := &Indexer{items: map[string]*api.Object{}, indexers: all, indices: map[string]index{}, tr: tr}
	for name := range all {
		x.indices[name] = index{}
	}
	return x
}

// Add stores obj under its key, replacing any older version.
func (x *Indexer) Add(obj *api.Object) error { return x.store("indexed", obj) }

// Update stores obj under its key; the same as Add.
func (x *Indexer) Update(obj *api.Object) error { return x.store("re-indexed", obj) }

func (x *Indexer) store(verb string, obj *api.Object) error {
	key, err := fifo.KeyOf(obj)
	if err != nil {
		return fmt.Errorf("indexer: %w", err)
	}
	x.mu.Lock()
	old := x.items[key]
	x.items[key] = obj
	x.rv = obj.Metadata.ResourceVersion
	err = x.updateIndicesLocked(key, old, obj)
	n := len(x.items)
	x.mu.Unlock()
	if x.tr.Enabled() {
		x.tr.Printf(narrate.Indexer, "%s %s rv=%s (%d cached)", verb, key, obj.Metadata.ResourceVersion, n)
	}
	return err
}

// Delete removes obj's key from the cache and from every index.
func (x *Indexer) Delete(obj *api.Object) error {
	key, err := fifo.KeyOf(obj)
	if err != nil {
		return fmt.Errorf("indexer: %w", err)
	}
	x.deleteKey(key)
	x.mu.Lock()
	x.rv = obj.Metadata.ResourceVersion
	x.mu.Unlock()
	return nil
}

// Bookmark records that the cache is up to date at resourceVersion.
func (x *Indexer) Bookmark(resourceVersion string) {
	x.mu.Lock()
	x.rv = resourceVersion
	x.mu.Unlock()
	x.tr.Printf(narrate.Indexer, "bookmark rv=%s", resourceVersion)
}

// ResourceVersion is the resourceVersion of the last list, object or
// bookmark the cache applied.
func (x *Indexer) ResourceVersion() string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.rv
}

// deleteKey removes key, for tombstones that carry only a key.
func (x *Indexer) deleteKey(key string) {
	x.mu.Lock()
	old, ok := x.items[key]
	if ok {
		delete(x.items, key)
		// Errors cannot happen here: computing old's values failed when it
		// was stored too, and then it was never indexed.
		_ = x.updateIndicesLocked(key, old, nil)
	}
	n := len(x.items)
	x.mu.Unlock()
	if ok {
		x.tr.Printf(narrate.Indexer, "deleted %s (%d cached)", key, n)
	}
}

// Replace swaps the whole content for list and rebuilds every index.
func (x *Indexer) Replace(list []*api.Object, resourceVersion string) error {
	items := make(map[string]*api.Object, len(list))
	for i, obj := range list {
		key, err := fifo.KeyOf(obj)
		if err != nil {
			return fmt.Errorf("indexer: Replace: item %d: %w", i, err) // nothing changed
		}
		items[key] = obj
	}
	x.mu.Lock()
	x.items = items
	x.rv = resourceVersion
	var errs []error
	for name := range x.indices {
		x.indices[name] = index{}
	}
	for key, obj := range items {
		if err := x.updateIndicesLocked(key, nil, obj); err != nil {
			errs = append(errs, err)
		}
	}
	x.mu.Unlock()
	x.tr.Printf(narrate.Indexer, "replaced with %d objects at rv %s", len(items), resourceVersion)
	return errors.Join(errs...)
}

// updateIndicesLocked moves key from old's index values to obj's. An
// index function that fails leaves key out of that index (the object is
// still cached and every other index is still right) and the failure is
// returned: a broken index function is reported, never a panic.
func (x *Indexer) updateIndicesLocked(key string, old, obj *api.Object) error {
	var errs []error
	for name, fn := range x.indexers {
		if fn == nil {
			errs = append(errs, fmt.Errorf("indexer: index %q has a nil IndexFunc", name))
			continue
		}
		var oldValues, newValues []string
		if old != nil {
			oldValues, _ = fn(old) // it failed when old was stored, so was never indexed
		}
		if obj != nil {
			var err error
			if newValues, err = fn(obj); err != nil {
				errs = append(errs, fmt.Errorf("indexer: index %q of %s: %w", name, key, err))
				newValues = nil
			}
		}
		// The common case, nothing moved: skip the map churn.
		if len(oldValues) == 1 && len(newValues) == 1 && oldValues[0] == newValues[0] {
			continue
		}
		ix := x.indices[name]
		for _, v := range oldValues {
			ix.remove(v, key)
		}
		for _, v := range newValues {
			ix.add(v, key)
		}
	}
	return errors.Join(errs...)
}

// Get returns the cached object with obj's key.
func (x *Indexer) Get(obj *api.Object) (*api.Object, bool) {
	key, err := fifo.KeyOf(obj)
	if err != nil {
		return nil, false
	}
	return x.GetByKey(key)
}

// GetByKey returns the cached object with this "namespace/name" key.
func (x *Indexer) GetByKey(key string) (*api.Object, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	o, ok := x.items[key]
	return o, ok
}

// List returns every cached object, ordered by key.
func (x *Indexer) List() []*api.Object {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.objectsLocked(slices.Sorted(maps.Keys(x.items)))
}

// ListKeys returns every cached key, sorted.
func (x *Indexer) ListKeys() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return slices.Sorted(maps.Keys(x.items))
}

// Len is the number of cached objects.
func (x *Indexer) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.items)
}

// ByIndex returns the objects indexed under value in the named index,
// ordered by key.
func (x *Indexer) ByIndex(indexName, value string) ([]*api.Object, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	keys, err := x.indexKeysLocked(indexName, value)
	if err != nil {
		return nil, err
	}
	return x.objectsLocked(keys), nil
}

// IndexKeys returns the keys indexed under value in the named index,
// sorted.
func (x *Indexer) IndexKeys(indexName, value string) ([]string, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.indexKeysLocked(indexName, value)
}

// Index returns the objects that share any of obj's values in the named
// index (for the namespace index: every object in obj's namespace).
func (x *Indexer) Index(indexName string, obj *api.Object) ([]*api.Object, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	fn, ok := x.indexers[indexName]
	if !ok || fn == nil {
		return nil, fmt.Errorf("indexer: no index named %q", indexName)
	}
	values, err := fn(obj)
	if err != nil {
		return nil, fmt.Errorf("indexer: index %q: %w", indexName, err)
	}
	seen := map[string]struct{}{}
	for _, v := range values {
		maps.Copy(seen, x.indices[indexName][v])
	}
	return x.objectsLocked(slices.Sorted(maps.Keys(seen))), nil
}

// ListIndexFuncValues returns every value the named index currently holds
// (e.g. every namespace with at least one object), sorted.
func (x *Indexer) ListIndexFuncValues(indexName string) []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return slices.Sorted(maps.Keys(x.indices[indexName]))
}

// GetIndexers returns a copy of the index functions.
func (x *Indexer) GetIndexers() Indexers {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return maps.Clone(x.indexers)
}

// AddIndexers adds index functions. It is refused once the cache holds
// objects, as client-go did for years (newer client-go back-fills the new
// indexes instead): an index added late would be built from a cache that
// is changing under it, and the refusal keeps the rule simple. Redefining
// an existing index is refused too.
func (x *Indexer) AddIndexers(indexers Indexers) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.items) > 0 {
		return fmt.Errorf("indexer: cannot add indexers to a cache that already holds %d objects", len(x.items))
	}
	for name, fn := range indexers {
		if _, exists := x.indexers[name]; exists {
			return fmt.Errorf("indexer: index %q already exists", name)
		}
		if fn == nil {
			return fmt.Errorf("indexer: index %q has a nil IndexFunc", name)
		}
	}
	for name, fn := range indexers {
		x.indexers[name] = fn
		x.indices[name] = index{}
	}
	return nil
}

func (x *Indexer) indexKeysLocked(indexName, value string) ([]string, error) {
	if _, ok := x.indexers[indexName]; !ok {
		return nil, fmt.Errorf("indexer: no index named %q", indexName)
	}
	return slices.Sorted(maps.Keys(x.indices[indexName][value])), nil
}

func (x *Indexer) objectsLocked(keys []string) []*api.Object {
	out := make([]*api.Object, 0, len(keys))
	for _, k := range keys {
		out = append(out, x.items[k])
	}
	return out
}
