package registry

import (
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
type Registry struct {
	entries        []*Entry
	byGroupVersion map[string]map[string]*Entry // "v1", "apps/v1" → resource name → entry
	byResource     map[api.GroupResource]*Entry
	namespaces     *Entry
}

// New builds the registry of resources, without watch caches yet.
func New(resources []*Resource) *Registry {
	reg := &Registry{byGroupVersion: map[string]map[string]*Entry{}, byResource: map[api.GroupResource]*Entry{}}
	for _, res := range resources {
		e := &Entry{Resource: res}
		gv := res.APIVersion()
		if reg.byGroupVersion[gv] == nil {
			reg.byGroupVersion[gv] = map[string]*Entry{}
		}
		reg.byGroupVersion[gv][res.Name] = e
		reg.byResource[res.GroupResource()] = e
		reg.entries = append(reg.entries, e)
		if res.Name == "namespaces" && res.Group == "" {
			reg.namespaces = e
		}
	}
	return reg
}

// Entries are the served resources in table order. The slice is shared:
// callers must not change it.
func (reg *Registry) Entries() []*Entry { return reg.entries }

// Lookup finds a resource by group version ("v1", "apps/v1") and plural
// name; nil if it is not served.
func (reg *Registry) Lookup(groupVersion, name string) *Entry {
	return reg.byGroupVersion[groupVersion][name]
}

// ServesGroupVersion reports whether any resource is served in gv.
func (reg *Registry) ServesGroupVersion(gv string) bool { return reg.byGroupVersion[gv] != nil }

// ByGroupResource finds a resource by group and plural name; nil if it is
// not served.
func (reg *Registry) ByGroupResource(gr api.GroupResource) *Entry { return reg.byResource[gr] }

// Namespaces is the namespaces resource, which other resources live in.
func (reg *Registry) Namespaces() *Entry { return reg.namespaces }
