package registry

import (
	"fmt"
	"slices"
	"sync"

	"listwatch/api"
	"listwatch/apiserver/cacher"
)

// Entry is one served resource: its declaration and, once the server has
// started it, its watch cache.
type Entry struct {
	*Resource
	Cacher *cacher.Cacher
}

// Registry is every resource a server serves, found by group version and
// name (routing), by group and resource (errors, faults) or in table order
// (discovery, the debug view).
//
// Built-in resources are there from the start; custom resources come and
// go with their CustomResourceDefinitions (Add, Remove), so every method is
// safe for concurrent use.
type Registry struct {
	mu             sync.RWMutex
	entries        []*Entry
	byGroupVersion map[string]map[string]*Entry // "v1", "apps/v1" → resource name → entry
	byResource     map[api.GroupResource]*Entry
	namespaces     *Entry
}

// New builds the registry of resources, without watch caches yet.
func New(resources []*Resource) *Registry {
	reg := &Registry{byGroupVersion: map[string]map[string]*Entry{}, byResource: map[api.GroupResource]*Entry{}}
	for _, res := range resources {
		reg.addLocked(&Entry{Resource: res})
	}
	return reg
}

func (reg *Registry) addLocked(e *Entry) {
	gv := e.APIVersion()
	if reg.byGroupVersion[gv] == nil {
		reg.byGroupVersion[gv] = map[string]*Entry{}
	}
	reg.byGroupVersion[gv][e.Name] = e
	reg.byResource[e.GroupResource()] = e
	reg.entries = append(reg.entries, e)
	if e.Name == "namespaces" && e.Group == "" {
		reg.namespaces = e
	}
}

// Add serves one more resource, in one or more versions (a custom
// resource whose definition was just created: one entry per served
// version), after the built-in ones. The first entry is the one
// ByGroupResource finds. It is refused if the group and resource is served
// already.
func (reg *Registry) Add(entries ...*Entry) error {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	gr, err := sameResource(entries)
	if err != nil {
		return err
	}
	if reg.byResource[gr] != nil {
		return fmt.Errorf("registry: %s is served already", gr)
	}
	reg.addAllLocked(entries)
	return nil
}

// sameResource returns the group and resource of entries, which must all
// be versions of one.
func sameResource(entries []*Entry) (api.GroupResource, error) {
	if len(entries) == 0 {
		return api.GroupResource{}, fmt.Errorf("registry: no entries")
	}
	gr := entries[0].GroupResource()
	for _, e := range entries[1:] {
		if e.GroupResource() != gr {
			return gr, fmt.Errorf("registry: %s and %s are not one resource", gr, e.GroupResource())
		}
	}
	return gr, nil
}

func (reg *Registry) addAllLocked(entries []*Entry) {
	for _, e := range entries {
		reg.addLocked(e)
	}
	reg.byResource[entries[0].GroupResource()] = entries[0]
}

// Remove stops serving a resource, in every version, and returns its
// entries (none if it was not served).
func (reg *Registry) Remove(gr api.GroupResource) []*Entry {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return reg.removeLocked(gr)
}

func (reg *Registry) removeLocked(gr api.GroupResource) []*Entry {
	if reg.byResource[gr] == nil {
		return nil
	}
	delete(reg.byResource, gr)
	var removed []*Entry
	for _, e := range reg.entries {
		if e.GroupResource() != gr {
			continue
		}
		removed = append(removed, e)
		gv := e.APIVersion()
		delete(reg.byGroupVersion[gv], e.Name)
		if len(reg.byGroupVersion[gv]) == 0 {
			delete(reg.byGroupVersion, gv)
		}
	}
	reg.entries = slices.DeleteFunc(slices.Clone(reg.entries), func(x *Entry) bool { return x.GroupResource() == gr })
	return removed
}

// Entries are the served resources in table order (custom resources last,
// in the order they were added). The slice is a snapshot the caller owns.
func (reg *Registry) Entries() []*Entry {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return slices.Clone(reg.entries)
}

// Lookup finds a resource by group version ("v1", "apps/v1") and plural
// name; nil if it is not served.
func (reg *Registry) Lookup(groupVersion, name string) *Entry {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return reg.byGroupVersion[groupVersion][name]
}

// ServesGroupVersion reports whether any resource is served in gv.
func (reg *Registry) ServesGroupVersion(gv string) bool {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return reg.byGroupVersion[gv] != nil
}

// ByGroupResource finds a resource by group and plural name (of a resource
// served in several versions, the entry added first); nil if it is not
// served.
func (reg *Registry) ByGroupResource(gr api.GroupResource) *Entry {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return reg.byResource[gr]
}

// Namespaces is the namespaces resource, which other resources live in.
func (reg *Registry) Namespaces() *Entry { return reg.namespaces }

// Replace swaps every version of a served resource for entries (the same
// group and resource, maybe other versions) in one step, and returns the
// entries it replaced: requests that already found them finish with them.
// The first of entries is the one ByGroupResource finds.
func (reg *Registry) Replace(entries ...*Entry) ([]*Entry, error) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	gr, err := sameResource(entries)
	if err != nil {
		return nil, err
	}
	old := reg.removeLocked(gr)
	if old == nil {
		return nil, fmt.Errorf("registry: %s is not served", gr)
	}
	reg.addAllLocked(entries)
	return old, nil
}
