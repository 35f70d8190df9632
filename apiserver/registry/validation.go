package registry

import (
	"errors"

	"listwatch/api/protobuf"
)

// Type validation and pruning of built-in kinds. kube-apiserver decodes
// every body of a built-in kind into its Go struct: a value of the wrong
// type fails the request, a member the struct has no field for is dropped
// (reported according to ?fieldValidation), invalid UTF-8 becomes U+FFFD.
// We keep objects as JSON, so we check the JSON against the same official
// definitions instead: the descriptor set of api/protobuf, whose messages
// are the Go structs' fields and types (protobuf.Schema.Conform). Nothing
// is written here per kind.

// Conform checks the JSON of one object of r against its kind's typed
// schema and returns it pruned, or lets the resource's own Prune do it (a
// custom resource: its schema is its CRD's business). A kind neither knows
// passes through unchanged.
func (r *Resource) Conform(js []byte) (protobuf.Conformed, error) {
	if r.Prune != nil {
		return r.Prune(js)
	}
	if r.IsCustom() {
		return protobuf.Conformed{JSON: js}, nil
	}
	c, err := protobuf.Default().Conform(r.APIVersion(), r.Kind, js)
	if errors.Is(err, protobuf.ErrUnknownKind) {
		return protobuf.Conformed{JSON: js}, nil
	}
	return c, err
}
