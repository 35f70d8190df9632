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

// Add serves one more resource (a custom resource whose definition was
// just created), after the built-in ones. It is refused if the group and
// resource is served already.
func (reg *Registry) Add(e *Entry) error {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.byResource[e.GroupResource()] != nil {
		return fmt.Errorf("registry: %s is served already", e.GroupResource())
	}
	reg.addLocked(e)
	return nil
}

// Remove stops serving a resource and returns its entry (nil if it was not
// served).
func (reg *Registry) Remove(gr api.GroupResource) *Entry {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	e := reg.byResource[gr]
	if e == nil {
		return nil
	}
	delete(reg.byResource, gr)
	gv := e.APIVersion()
	delete(reg.byGroupVersion[gv], e.Name)
	if len(reg.byGroupVersion[gv]) == 0 {
		delete(reg.byGroupVersion, gv)
	}
	reg.entries = slices.DeleteFunc(slices.Clone(reg.entries), func(x *Entry) bool { return x == e })
	return e
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

// ByGroupResource finds a resource by group and plural name; nil if it is
// not served.
func (reg *Registry) ByGroupResource(gr api.GroupResource) *Entry {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return reg.byResource[gr]
}

// Namespaces is the namespaces resource, which other resources live in.
func (reg *Registry) Namespaces() *Entry { return reg.namespaces }

// Replace swaps the declaration of a served resource, keeping its watch
// cache: requests that already found the old entry finish with it.
func (reg *Registry) Replace(res *Resource) error {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	old := reg.byResource[res.GroupResource()]
	if old == nil || old.APIVersion() != res.APIVersion() {
		return fmt.Errorf("registry: %s is not served in %s", res.GroupResource(), res.APIVersion())
	}
	e := &Entry{Resource: res, Cacher: old.Cacher}
	reg.byResource[res.GroupResource()] = e
	reg.byGroupVersion[res.APIVersion()][res.Name] = e
	reg.entries = slices.Clone(reg.entries)
	reg.entries[slices.Index(reg.entries, old)] = e
	return nil
}
