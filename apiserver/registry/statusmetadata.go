package registry

import (
	"maps"

	"listwatch/api"
)

// What a write through a built-in kind's status subresource keeps of the
// stored metadata. The handlers write the request's metadata with the
// new status, as the kind's status strategy does when it resets only spec
// (pkg/registry/core/namespace/strategy.go,
// namespaceStatusStrategy.PrepareForUpdate); a kind whose strategy also
// resets some of its metadata does so in its PrepareStatusUpdate with
// these.

// keepStoredMetaExtra sets obj's metadata member name to old's, or removes
// it when old has none.
func keepStoredMetaExtra(obj, old *api.Object, name string) {
	if raw := metaExtra(old, name); raw != nil {
		setMetaExtra(obj, name, raw)
	} else {
		removeMetaExtra(obj, name)
	}
}

// keepStoredLabels sets obj's labels to old's: a status write of a kind
// whose strategy resets them.
func keepStoredLabels(obj, old *api.Object) error {
	obj.Metadata.Labels = maps.Clone(old.Metadata.Labels)
	return nil
}
