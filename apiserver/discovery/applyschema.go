package discovery

import (
	"encoding/json"

	"listwatch/apiserver/registry"
)

// Server-side apply reads the same schemas OpenAPI publishes: which lists
// merge by key, which are sets, which objects are atomic. kube-apiserver
// builds its apply type converter from its OpenAPI models too
// (k8s.io/apiserver pkg/endpoints/handlers/fieldmanager, managedfields
// NewTypeConverter over the kinds' openapi definitions).

// KindSchemas returns the OpenAPI v3 schemas of a built-in resource's
// group version and the name of its kind's own among them; ok is false
// for a kind without a recorded schema.
func KindSchemas(res *registry.Resource) (defs map[string]json.RawMessage, root string, ok bool) {
	raw := components(openAPIPath(res))
	if raw == nil {
		return nil, "", false
	}
	var c struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return nil, "", false
	}
	for name, s := range c.Schemas {
		var k struct {
			GVK []struct{ Group, Version, Kind string } `json:"x-kubernetes-group-version-kind"`
		}
		if json.Unmarshal(s, &k) != nil {
			continue
		}
		for _, gvk := range k.GVK {
			if gvk.Group == res.Group && gvk.Version == res.Version && gvk.Kind == res.Kind {
				return c.Schemas, name, true
			}
		}
	}
	return nil, "", false
}

// CoreSchemas returns the core group's schemas, which hold ObjectMeta:
// what a custom resource's metadata is read with.
func CoreSchemas() (map[string]json.RawMessage, error) { return coreSchemas() }
