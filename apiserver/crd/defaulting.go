package crd

import (
	"encoding/json"
	"fmt"

	"listwatch/api"
)

// Defaults of a custom resource: a structural schema's "default" values,
// filled in where an object lacks them, as apiextensions-apiserver 1.37.2
// does (pkg/apiserver/schema/defaulting/algorithm.go, Default): when a
// request's body is decoded, with the schema of the version it is in
// (customresource_handler.go, unstructuredNegotiatedSerializer.
// DecoderToVersion, unstructuredDefaulter), and when an object is read
// from storage, with the storage version's schema
// (crdConversionRESTOptionsGetter: the storage codec defaults before it
// converts). So an object stored before its definition gained a default
// reads with it, without being written again.

// hasDefaults reports whether s declares a default anywhere.
func (s *Schema) hasDefaults() bool {
	if s == nil {
		return false
	}
	if s.declaresDefault() {
		return true
	}
	for _, p := range s.Properties {
		if p.hasDefaults() {
			return true
		}
	}
	return s.Items.hasDefaults() || s.AdditionalProperties.hasDefaults()
}

// declaresDefault reports whether s has a default of its own (a null
// default is none, as apiextensions reads it into a nil Default.Object).
func (s *Schema) declaresDefault() bool {
	return s != nil && len(s.Default) > 0 && string(s.Default) != "null"
}

// defaultValue is a fresh copy of the default.
func (s *Schema) defaultValue() any {
	v, err := decodeValue(s.Default)
	if err != nil {
		return nil // not JSON: the definition was refused, see check
	}
	return v
}

// missing reports whether a value found (or not) wants s's default: it is
// absent, or null where s does not allow null.
func (s *Schema) missing(v any, found bool) bool {
	return s.declaresDefault() && (!found || (v == nil && !s.Nullable))
}

// applyDefaults fills in, in place, the defaults s declares for what x
// lacks, at every depth. A default filled in is itself defaulted, as its
// own fields may have defaults too.
func (s *Schema) applyDefaults(x any) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, p := range s.Properties {
			if v, found := x[k]; p.missing(v, found) {
				x[k] = p.defaultValue()
			}
		}
		for k, v := range x {
			if p := s.Properties[k]; p != nil {
				p.applyDefaults(v)
			} else if ap := s.AdditionalProperties; ap != nil {
				if ap.missing(v, true) {
					x[k] = ap.defaultValue()
				}
				ap.applyDefaults(x[k])
			}
		}
	case []any:
		for i := range x {
			if s.Items.missing(x[i], true) {
				x[i] = s.Items.defaultValue()
			}
			s.Items.applyDefaults(x[i])
		}
	}
}

// defaultObject fills in the defaults schema declares for obj's fields
// (apiVersion, kind and metadata are every object's own, and left alone).
func defaultObject(schema *Schema, obj *api.Object) error {
	if !schema.hasDefaults() {
		return nil
	}
	for _, name := range sortedKeys(schema.Properties) {
		p := schema.Properties[name]
		if name == "apiVersion" || name == "kind" || name == "metadata" || !p.hasDefaults() {
			continue
		}
		raw := obj.Get(name)
		var v any
		if raw != nil {
			var err error
			if v, err = decodeValue(raw); err != nil {
				return api.NewBadRequest(fmt.Sprintf("field %s: %v", name, err))
			}
		}
		if p.missing(v, raw != nil) {
			v = p.defaultValue()
		}
		p.applyDefaults(v)
		if v == nil && raw == nil {
			continue
		}
		out, err := json.Marshal(v)
		if err != nil {
			return api.NewInternalError(err)
		}
		if err := obj.Set(name, out); err != nil {
			return api.NewInternalError(err)
		}
	}
	return nil
}
