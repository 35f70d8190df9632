package crd

import (
	"listwatch/api"
	"listwatch/apiserver/registry"
)

// Every served version of a definition reads and writes the same objects,
// kept in the storage version. A definition's conversion strategy "None"
// (the default, the one we serve) converts an object between versions by
// changing its apiVersion and nothing else (apiextensions-apiserver
// pkg/apiserver/conversion/nop_converter.go, nopConverter.Convert): each
// version's storage decodes what etcd holds into its own version, and
// encodes what it writes into the storage version
// (customresource_handler.go, crdConversionRESTOptionsGetter:
// decoderVersion the served version, encoderVersion the storage one).
// Webhook conversion is not served.

// storedAs converts version v's objects to and from the storage version.
// What is read from storage gets the storage version's defaults first
// (defaulting.go).
func storedAs(group string, v, storage *Version) *registry.StoredAs {
	served, stored := group+"/"+v.Name, group+"/"+storage.Name
	defaults := storage.schema()
	if !defaults.hasDefaults() {
		defaults = nil
	}
	return &registry.StoredAs{
		ToStorage:   func(o *api.Object) *api.Object { return withAPIVersion(o, stored) },
		FromStorage: func(o *api.Object) *api.Object { return fromStorage(o, served, defaults) },
	}
}

// withAPIVersion is o in apiVersion gv: o itself if it is already, a copy
// otherwise (objects read from the store are shared and read-only).
func withAPIVersion(o *api.Object, gv string) *api.Object {
	if o.APIVersion == gv {
		return o
	}
	out := o.DeepCopy()
	out.APIVersion = gv
	return out
}

// fromStorage is a stored object as version gv reads it: defaulted with
// the storage version's schema (nil: it has no defaults), then converted.
// An object whose fields cannot be decoded reads as it is stored.
func fromStorage(o *api.Object, gv string, defaults *Schema) *api.Object {
	if defaults == nil {
		return withAPIVersion(o, gv)
	}
	out := o.DeepCopy()
	out.APIVersion = gv
	if err := defaultObject(defaults, out); err != nil {
		return withAPIVersion(o, gv)
	}
	return out
}
