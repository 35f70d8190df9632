package registry

import (
	"errors"
	"strings"

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
// schema and returns it pruned. A kind the schema does not know (a custom
// resource) passes through unchanged: its schema is its CRD's business.
func (r *Resource) Conform(js []byte) (protobuf.Conformed, error) {
	if strings.Contains(r.Group, ".") && !strings.HasSuffix(r.Group, ".k8s.io") {
		// A CRD's group always has a dot and is never a built-in one, even
		// when its first label ("apps.example.com") would name one.
		return protobuf.Conformed{JSON: js}, nil
	}
	c, err := protobuf.Default().Conform(r.APIVersion(), r.Kind, js)
	if errors.Is(err, protobuf.ErrUnknownKind) {
		return protobuf.Conformed{JSON: js}, nil
	}
	return c, err
}
