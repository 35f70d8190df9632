package crd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"listwatch/api"
)

// Schema is the structural subset of OpenAPI v3 a CRD version declares
// (spec.versions[].schema.openAPIV3Schema): types, properties, items,
// required fields, defaults, and the three Kubernetes extensions that
// matter for pruning. It is apiextensions' structural schema (pkg/apiserver/schema).
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	AdditionalProperties *Schema            `json:"-"`
	Required             []string           `json:"required,omitempty"`
	Enum                 []json.RawMessage  `json:"enum,omitempty"`
	Nullable             bool               `json:"nullable,omitempty"`
	// PreserveUnknownFields keeps fields the schema does not name.
	PreserveUnknownFields bool `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	// IntOrString accepts an integer or a string.
	IntOrString bool `json:"x-kubernetes-int-or-string,omitempty"`
	// EmbeddedResource makes the object a Kubernetes object of its own:
	// its apiVersion, kind and metadata are never pruned, and its
	// metadata is an ObjectMeta (fieldvalidation.go).
	EmbeddedResource bool `json:"x-kubernetes-embedded-resource,omitempty"`
	// Default is the value an object lacking the field gets
	// (defaulting.go).
	Default json.RawMessage `json:"default,omitempty"`
}

// UnmarshalJSON reads a schema; additionalProperties may be a boolean
// (ignored: true adds nothing structural, false is the default) or a
// schema for the values of a map.
func (s *Schema) UnmarshalJSON(data []byte) error {
	type plain Schema
	var aux struct {
		plain
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*s = Schema(aux.plain)
	if ap := bytes.TrimSpace(aux.AdditionalProperties); len(ap) > 0 && ap[0] == '{' {
		s.AdditionalProperties = &Schema{}
		if err := json.Unmarshal(ap, s.AdditionalProperties); err != nil {
			return fmt.Errorf("additionalProperties: %w", err)
		}
	}
	return nil
}

var schemaTypes = []string{"object", "array", "string", "integer", "number", "boolean"}

// check reports what makes a schema unusable (an unknown type, or a root
// that is not an object), field by field.
func (s *Schema) check(path string) []api.StatusCause {
	var causes []api.StatusCause
	if s.Type != "" && !slices.Contains(schemaTypes, s.Type) {
		causes = append(causes, api.StatusCause{Type: api.CauseFieldValueNotSupported, Field: path + ".type",
			Message: fmt.Sprintf("Unsupported value: %q: supported values: %s", s.Type, quoteAll(schemaTypes))})
	}
	if s.Type == "" && !s.IntOrString && !s.PreserveUnknownFields {
		causes = append(causes, api.StatusCause{Type: api.CauseFieldValueRequired, Field: path + ".type",
			Message: "Required value: must not be empty for specified object fields"})
	}
	for _, name := range sortedKeys(s.Properties) {
		causes = append(causes, s.Properties[name].check(path+".properties["+name+"]")...)
	}
	if s.Items != nil {
		causes = append(causes, s.Items.check(path+".items")...)
	}
	if s.AdditionalProperties != nil {
		causes = append(causes, s.AdditionalProperties.check(path+".additionalProperties")...)
	}
	return causes
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonType names the JSON type of a decoded value as the validation
// messages do ("string", "integer", ...).
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// validate checks v against s and prunes the fields s does not know, in
// place. It returns the value to keep (pruning may replace a map), the
// causes of a 422, and the paths of the pruned fields.
func (s *Schema) validate(path string, v any) (any, []api.StatusCause, []string) {
	if v == nil {
		if s.Nullable {
			return nil, nil, nil
		}
		return nil, []api.StatusCause{typeInvalid(path, v, s.Type)}, nil
	}
	got := jsonType(v)
	switch {
	case s.IntOrString:
		if got != "integer" && got != "string" {
			return v, []api.StatusCause{typeInvalid(path, v, "integer or string")}, nil
		}
	case s.Type == "":
		// Only x-kubernetes-preserve-unknown-fields: anything goes.
	case s.Type == "number" && got == "integer":
	case s.Type != got:
		return v, []api.StatusCause{typeInvalid(path, v, s.Type)}, nil
	}
	if len(s.Enum) > 0 {
		raw, _ := json.Marshal(v)
		if !slices.ContainsFunc(s.Enum, func(e json.RawMessage) bool { return jsonEqual(e, raw) }) {
			return v, []api.StatusCause{{Type: api.CauseFieldValueNotSupported, Field: path,
				Message: fmt.Sprintf("Unsupported value: %s: supported values: %s", raw, joinRaw(s.Enum))}}, nil
		}
	}
	var causes []api.StatusCause
	var pruned []string
	switch x := v.(type) {
	case map[string]any:
		s.dropNulls(x)
		for _, req := range s.Required {
			if _, ok := x[req]; !ok {
				causes = append(causes, api.StatusCause{Type: api.CauseFieldValueRequired, Field: join(path, req), Message: "Required value"})
			}
		}
		for _, k := range sortedKeys(x) {
			if s.EmbeddedResource && isEmbeddedMetaField(k) {
				causes = append(causes, s.validateEmbeddedMeta(path, k, x[k])...)
				continue
			}
			sub := s.Properties[k]
			if sub == nil {
				sub = s.AdditionalProperties
			}
			if sub == nil {
				if !s.PreserveUnknownFields {
					delete(x, k)
					pruned = append(pruned, join(path, k))
				}
				continue
			}
			nv, c, p := sub.validate(join(path, k), x[k])
			x[k] = nv
			causes = append(causes, c...)
			pruned = append(pruned, p...)
		}
	case []any:
		if s.Items != nil {
			for i := range x {
				nv, c, p := s.Items.validate(fmt.Sprintf("%s[%d]", path, i), x[i])
				x[i] = nv
				causes = append(causes, c...)
				pruned = append(pruned, p...)
			}
		}
	}
	return v, causes, pruned
}

// Nulls a schema does not allow: kube-apiserver drops a null member whose
// schema is neither nullable nor has a default before it validates, so
// that it reads as absent ("Required value" if it is required), and
// leaves a null with a default to be defaulted (k8s.io/apiextensions-apiserver
// v0.37.2 pkg/apiserver/schema/defaulting/prunenulls.go,
// PruneNonNullableNullsWithoutDefaults, called when a request's body is
// decoded: customresource_handler.go, unstructuredSchemaCoercer.apply).
// A null list item is not dropped, and fails validation as its type.

// dropsNull reports whether a null where s applies is dropped.
func (s *Schema) dropsNull() bool { return s != nil && !s.Nullable && !s.declaresDefault() }

// memberSchema is the schema of member k of an object s describes: its
// property's, or else its additionalProperties' (nil: unknown).
func (s *Schema) memberSchema(k string) *Schema {
	if p := s.Properties[k]; p != nil {
		return p
	}
	return s.AdditionalProperties
}

// dropNulls deletes from x, an object s describes, the null members whose
// schema does not allow them.
func (s *Schema) dropNulls(x map[string]any) {
	for k, v := range x {
		if v == nil && s.memberSchema(k).dropsNull() {
			delete(x, k)
		}
	}
}

// validateEmbeddedMeta validates member k (apiVersion, kind or metadata)
// of an embedded object against the schema it is declared with, if any,
// and never prunes it: pruning leaves all three alone, metadata is
// conformed to ObjectMeta (fieldvalidation.go), and what kube-apiserver
// requires of the values whatever the schema says, embeddedCauses checks.
// kube-apiserver validates the object against its schema as a whole
// (k8s.io/apiextensions-apiserver v0.37.2 pkg/apiserver/validation,
// ValidateCustomResource), so a declared apiVersion or kind is held to its
// type and enum as any field is. Declared metadata is not validated here,
// where validate would prune it: conforming it to ObjectMeta refuses the
// wrong types already, but an enum declared inside it, which
// kube-apiserver would enforce, ours ignores.
func (s *Schema) validateEmbeddedMeta(path, k string, v any) []api.StatusCause {
	sub := s.Properties[k]
	if sub == nil || k == "metadata" {
		return nil
	}
	_, causes, _ := sub.validate(join(path, k), v)
	return causes
}

// embeddedCauses checks the apiVersion and kind of every embedded object
// (x-kubernetes-embedded-resource) in v, at path, following the schema's
// properties, map values and list items, as kube-apiserver does after the
// schema's validation on a create or an update (not on a write of the
// status subresource): k8s.io/apiextensions-apiserver v0.37.2
// pkg/apiserver/schema/objectmeta/validation.go, Validate, called by
// pkg/registry/customresource/strategy.go, Validate and ValidateUpdate.
// An object's own causes come before those of the objects inside it; in
// one object, Kubernetes lists apiVersion and kind missing first and then
// the rest in map order, ours apiVersion before kind. It also validates
// an embedded object's metadata as ObjectMeta (name, namespace, labels,
// annotations: ValidateObjectMetaDeclaratively), which ours does not.
func embeddedCauses(s *Schema, v any, path string) []api.StatusCause {
	if s == nil {
		return nil
	}
	var causes []api.StatusCause
	switch x := v.(type) {
	case map[string]any:
		if s.EmbeddedResource {
			causes = append(causes, typeMetaCauses(x, path)...)
		}
		for _, k := range sortedKeys(x) {
			if sub := s.Properties[k]; sub != nil {
				causes = append(causes, embeddedCauses(sub, x[k], join(path, k))...)
			} else if s.AdditionalProperties != nil {
				causes = append(causes, embeddedCauses(s.AdditionalProperties, x[k], path+"["+k+"]")...)
			}
		}
	case []any:
		for i := range x {
			causes = append(causes, embeddedCauses(s.Items, x[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return causes
}

// typeMetaCauses is what an embedded object's apiVersion and kind must
// be (objectmeta/validation.go, validateEmbeddedResource): both there, as
// strings, not empty; apiVersion a group version (at most one "/",
// k8s.io/apimachinery v0.37.2 pkg/runtime/schema/group_version.go,
// ParseGroupVersion), kind a DNS-1035 label but for its case.
func typeMetaCauses(x map[string]any, path string) []api.StatusCause {
	var causes []api.StatusCause
	for _, k := range []string{"apiVersion", "kind"} {
		if _, ok := x[k]; !ok {
			causes = append(causes, api.FieldRequired(join(path, k), ""))
		}
	}
	for _, k := range []string{"apiVersion", "kind"} {
		v, ok := x[k]
		str, isString := v.(string)
		var why string
		switch {
		case !ok:
			continue
		case !isString:
			why = "must be a string" // refused earlier, when the body was decoded
		case str == "":
			why = "must not be empty"
		case k == "apiVersion" && strings.Count(str, "/") > 1:
			why = "unexpected GroupVersion string: " + str
		case k == "kind":
			if errs := api.IsDNS1035Label(strings.ToLower(str)); len(errs) > 0 {
				why = "may have mixed case, but should otherwise match: " + strings.Join(errs, ",")
			}
		}
		if why != "" {
			causes = append(causes, api.FieldInvalid(join(path, k), unstructuredValue(v), why))
		}
	}
	return causes
}

// typeInvalid is the cause the real server gives for a value of the wrong
// type. Its "value" is the JSON type's name, not the value (fixture
// crd-widget-422-wrong-type.json).
func typeInvalid(path string, v any, want string) api.StatusCause {
	got := jsonType(v)
	return api.StatusCause{Type: causeFieldValueTypeInvalid, Field: path,
		Message: fmt.Sprintf("Invalid value: %q: %s in body must be of type %s: %q", got, path, want, got)}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ra, _ := json.Marshal(x)
	rb, _ := json.Marshal(y)
	return bytes.Equal(ra, rb)
}

func joinRaw(vs []json.RawMessage) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}

// decodeValue decodes JSON keeping integers apart from other numbers.
func decodeValue(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// causeFieldValueTypeInvalid is the cause of a value of the wrong JSON type.
const causeFieldValueTypeInvalid api.CauseType = "FieldValueTypeInvalid"
