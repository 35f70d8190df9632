package registry

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"listwatch/api"
)

// Field selectors beyond metadata.name and metadata.namespace. Each real
// kind lists the fields it may be selected by (AddFieldLabelConversionFunc
// in pkg/apis/core/v1/conversion.go); any other field is a 400 BadRequest
// before anything is read. Kinds that register none (ConfigMap,
// Deployment) answer with meta/v1's DefaultMetaV1FieldSelectorConversion
// message, the others with "field label not supported: <field>".

// selectableFields are the fields of a kind, besides metadata.name and
// metadata.namespace, that a field selector may name; ok is false for a
// kind that registers no conversion of its own (ReplicaSet, Lease,
// ServiceAccount: pkg/apis/apps/v1, coordination/v1 and core/v1 register
// none for them).
func (r *Resource) selectableFields() (fields []string, ok bool) {
	switch {
	case r.Group == "events.k8s.io" && r.Kind == "Event":
		// AddFieldLabelConversionsForEvent (pkg/apis/events/v1/conversion.go):
		// the core fields under this version's names; no "source".
		return []string{"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
			"regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath",
			"reason", "reportingController", "type"}, true
	case r.Group != "":
		return nil, false
	}
	switch r.Kind {
	case "Pod":
		return []string{"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
			"spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"}, true
	case "Event":
		return []string{"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
			"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
			"reason", "reportingComponent", "source", "type"}, true
	case "Namespace":
		return []string{"status.phase"}, true
	case "Secret":
		return []string{"type"}, true
	case "Service":
		return []string{"spec.clusterIP", "spec.type"}, true
	}
	return nil, false
}

// CheckFieldSelector refuses a selector on a field the kind cannot be
// selected by, with the real server's 400.
func (r *Resource) CheckFieldSelector(sel api.FieldSelector) error {
	fields, own := r.selectableFields()
	if !own {
		if err := sel.ValidateMetadataFields(); err != nil {
			return api.NewBadRequest(err.Error())
		}
		return nil
	}
	for _, req := range sel.Requirements() {
		if req.Field == api.FieldMetadataName || req.Field == api.FieldMetadataNamespace || slices.Contains(fields, req.Field) {
			continue
		}
		return api.NewBadRequest("field label not supported: " + req.Field)
	}
	return nil
}

// FieldMatcher returns the object filter of sel for this kind: the
// metadata fields as api.FieldSelector matches them, the kind's own fields
// read from the object (a missing field is empty; "source" of an Event is
// its source.component).
func (r *Resource) FieldMatcher(sel api.FieldSelector) func(*api.Object) bool {
	reqs := sel.Requirements()
	return func(o *api.Object) bool {
		for _, req := range reqs {
			var have string
			switch req.Field {
			case api.FieldMetadataName:
				have = o.Metadata.Name
			case api.FieldMetadataNamespace:
				have = o.Metadata.Namespace
			case "source":
				// The core Event's source.component, else its
				// reportingComponent (ToSelectableFields in
				// pkg/registry/core/event/strategy.go).
				if have = fieldText(o, "source.component"); have == "" {
					have = fieldText(o, "reportingComponent")
				}
			default:
				have = fieldText(o, req.Field)
			}
			if (have == req.Value) == (req.Operator == api.OpNotEquals) {
				return false
			}
		}
		return true
	}
}

// fieldText reads a dotted path of an object as the text a field selector
// compares: strings as they are, booleans and numbers as written.
func fieldText(o *api.Object, path string) string {
	top, rest, _ := strings.Cut(path, ".")
	raw := o.Get(top)
	for rest != "" && raw != nil {
		var next string
		next, rest, _ = strings.Cut(rest, ".")
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		raw = m[next]
	}
	if raw == nil {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var v any
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
