package crd

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/apiserver/registry"
)

// GroupResource of the definitions themselves.
var GroupResource = api.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}

// Names are a definition's spec.names.
type Names struct {
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular,omitempty"`
	ShortNames []string `json:"shortNames,omitempty"`
	Kind       string   `json:"kind"`
	ListKind   string   `json:"listKind,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// PrinterColumn is one additionalPrinterColumns entry.
type PrinterColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
	JSONPath    string `json:"jsonPath"`
}

// Version is one spec.versions entry.
type Version struct {
	Name    string `json:"name"`
	Served  bool   `json:"served"`
	Storage bool   `json:"storage"`
	Schema  *struct {
		OpenAPIV3Schema *Schema `json:"openAPIV3Schema"`
	} `json:"schema,omitempty"`
	Subresources *struct {
		Status *json.RawMessage `json:"status,omitempty"`
	} `json:"subresources,omitempty"`
	AdditionalPrinterColumns []PrinterColumn `json:"additionalPrinterColumns,omitempty"`
	// RawSchema is schema.openAPIV3Schema as written, descriptions and
	// all, for OpenAPI v3.
	RawSchema json.RawMessage `json:"-"`
}

// Spec is a definition's spec, as far as serving needs it.
type Spec struct {
	Group    string    `json:"group"`
	Names    Names     `json:"names"`
	Scope    string    `json:"scope"`
	Versions []Version `json:"versions"`
}

// Definition is a parsed CustomResourceDefinition.
type Definition struct {
	Name string
	UID  string
	Spec Spec
}

// Storage returns the storage version, the one objects are kept in.
func (d *Definition) Storage() *Version {
	for i := range d.Spec.Versions {
		if d.Spec.Versions[i].Storage {
			return &d.Spec.Versions[i]
		}
	}
	return nil
}

// GroupResource is the served resource's group and plural.
func (d *Definition) GroupResource() api.GroupResource {
	return api.GroupResource{Group: d.Spec.Group, Resource: d.Spec.Names.Plural}
}

// Parse reads a definition object (no validation).
func Parse(obj *api.Object) (*Definition, error) {
	d := &Definition{Name: obj.Metadata.Name, UID: obj.Metadata.UID}
	raw := obj.Get("spec")
	if raw == nil {
		return nil, fmt.Errorf("customresourcedefinition %s has no spec", obj.Metadata.Name)
	}
	if err := json.Unmarshal(raw, &d.Spec); err != nil {
		return nil, fmt.Errorf("spec of customresourcedefinition %s: %w", obj.Metadata.Name, err)
	}
	var schemas struct {
		Versions []struct {
			Schema struct {
				OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(raw, &schemas); err != nil {
		return nil, fmt.Errorf("spec of customresourcedefinition %s: %w", obj.Metadata.Name, err)
	}
	for i, v := range schemas.Versions {
		d.Spec.Versions[i].RawSchema = v.Schema.OpenAPIV3Schema
	}
	return d, nil
}

var (
	lowerName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1035   = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
)

// Validate says what is wrong with a definition, as 422 causes: the rules
// of apiextensions' validation.go that decide whether it can be served.
func (d *Definition) Validate(builtin func(api.GroupResource) bool) []api.StatusCause {
	var causes []api.StatusCause
	bad := func(field, msg string) {
		causes = append(causes, api.StatusCause{Type: api.CauseFieldValueInvalid, Field: field, Message: msg})
	}
	s := d.Spec
	if !strings.Contains(s.Group, ".") || !lowerName.MatchString(strings.ReplaceAll(s.Group, ".", "-")) {
		bad("spec.group", fmt.Sprintf("Invalid value: %q: should be a domain with at least one dot", s.Group))
	}
	if !lowerName.MatchString(s.Names.Plural) {
		bad("spec.names.plural", fmt.Sprintf("Invalid value: %q: must be a lowercase DNS-1035 label", s.Names.Plural))
	}
	if s.Names.Singular != "" && !lowerName.MatchString(s.Names.Singular) {
		bad("spec.names.singular", fmt.Sprintf("Invalid value: %q: must be a lowercase DNS-1035 label", s.Names.Singular))
	}
	// A kind may have mixed case ("CronTab", but "testcrd" too); lowered,
	// it must be a DNS-1035 label, like the plural.
	if !dns1035.MatchString(strings.ToLower(s.Names.Kind)) {
		bad("spec.names.kind", fmt.Sprintf("Invalid value: %q: may have mixed case, but should otherwise match a DNS-1035 label", s.Names.Kind))
	}
	if want := s.Names.Plural + "." + s.Group; d.Name != want {
		bad("metadata.name", fmt.Sprintf("Invalid value: %q: must be spec.names.plural+\".\"+spec.group", d.Name))
	}
	if s.Scope != "Namespaced" && s.Scope != "Cluster" {
		causes = append(causes, api.StatusCause{Type: api.CauseFieldValueNotSupported, Field: "spec.scope",
			Message: fmt.Sprintf("Unsupported value: %q: supported values: \"Cluster\", \"Namespaced\"", s.Scope)})
	}
	storage, served := 0, 0
	for i, v := range s.Versions {
		path := fmt.Sprintf("spec.versions[%d]", i)
		if !lowerName.MatchString(v.Name) {
			bad(path+".name", fmt.Sprintf("Invalid value: %q: must be a DNS-1035 label", v.Name))
		}
		if v.Storage {
			storage++
		}
		if v.Served {
			served++
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			causes = append(causes, api.StatusCause{Type: api.CauseFieldValueRequired, Field: path + ".schema.openAPIV3Schema",
				Message: "Required value: schemas are required"})
			continue
		}
		root := v.Schema.OpenAPIV3Schema
		if root.Type != "object" {
			bad(path+".schema.openAPIV3Schema.type", fmt.Sprintf("Invalid value: %q: must be object at the root", root.Type))
		}
		causes = append(causes, root.check(path+".schema.openAPIV3Schema")...)
	}
	if storage != 1 {
		bad("spec.versions", "Invalid value: must have exactly one version marked as storage version")
	}
	if served == 0 && len(s.Versions) > 0 {
		bad("spec.versions", "Invalid value: must have at least one served version")
	}
	if builtin != nil && builtin(d.GroupResource()) {
		bad("spec.names.plural", fmt.Sprintf("Invalid value: %q: %s is served by a built-in resource", s.Names.Plural, d.GroupResource()))
	}
	return causes
}

// defaulted fills in what the server defaults: singular and listKind.
func (n Names) defaulted() Names {
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" {
		n.ListKind = n.Kind + "List"
	}
	return n
}

// Resources declares the custom resource a definition serves, one
// registry resource per served version, the storage version first if it
// is served: apiextensions-apiserver builds a storage of its own for each
// (customresource_handler.go, getOrCreateServingInfoFor, one
// customresource.NewStorage per version, each with its own watch cache),
// all over the objects kept in the storage version (conversion.go).
func (d *Definition) Resources() []*registry.Resource {
	storage := d.Storage()
	var out []*registry.Resource
	if storage.Served {
		out = append(out, d.resource(storage, storage))
	}
	for i := range d.Spec.Versions {
		if v := &d.Spec.Versions[i]; v.Served && v != storage {
			out = append(out, d.resource(v, storage))
		}
	}
	return out
}

// resource declares version v: its schema's validation, pruning and
// defaults on every write, its printer columns, and generation counting as
// for every custom resource; its objects are stored as storage's.
func (d *Definition) resource(v, storage *Version) *registry.Resource {
	names := d.Spec.Names.defaulted()
	schema := v.schema()
	statusSubresource := v.Subresources != nil && v.Subresources.Status != nil
	res := &registry.Resource{
		Group: d.Spec.Group, Version: v.Name, Name: names.Plural, SingularName: names.Singular,
		Kind: names.Kind, ListKind: names.ListKind, ShortNames: names.ShortNames, Categories: names.Categories,
		Namespaced: d.Spec.Scope == "Namespaced",
		// The verbs in the order a real server lists them for a custom
		// resource (crd-discovery-apis-group-v1.json).
		Verbs:          []string{registry.VerbDelete, registry.VerbDeleteCollection, registry.VerbGet, registry.VerbList, registry.VerbPatch, registry.VerbCreate, registry.VerbUpdate, registry.VerbWatch},
		Generation:     true,
		ValidateName:   registry.ValidateSubdomainName,
		Prune:          pruner(schema),                                                    // fieldvalidation.go
		Default:        func(obj *api.Object) error { return defaultObject(schema, obj) }, // defaulting.go
		OpenAPISchema:  v.RawSchema,
		StorageVersion: storage.Name,
		StoredAs:       storedAs(d.Spec.Group, v, storage), // conversion.go
	}
	gk := res.GroupKind()
	res.PrepareCreate = func(obj *api.Object) error {
		obj.Unstructured = true
		return validateObject(gk, schema, obj, true)
	}
	res.PrepareUpdate = func(obj, _ *api.Object) error {
		obj.Unstructured = true
		return validateObject(gk, schema, obj, true)
	}
	if statusSubresource {
		// The handlers keep status out of writes of the object and let
		// only status change through .../status, where kube-apiserver
		// does not check embedded objects (status_strategy.go,
		// ValidateUpdate).
		res.Subresources = []string{registry.SubresourceStatus}
		res.PrepareStatusUpdate = func(obj, _ *api.Object) error {
			obj.Unstructured = true
			return validateObject(gk, schema, obj, false)
		}
		res.StatusKeepsStoredMetadata = true
	}
	for _, c := range v.AdditionalPrinterColumns {
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		path := c.JSONPath
		res.Columns = append(res.Columns, registry.NewColumn(c.Name, c.Type, c.Format, desc, c.Priority,
			func(o *api.Object) any { return lookupPath(o, path) }))
	}
	res.NoAgeColumn = len(v.AdditionalPrinterColumns) > 0
	return res
}

// schema is the version's openAPIV3Schema, nil if it has none.
func (v *Version) schema() *Schema {
	if v.Schema == nil {
		return nil
	}
	return v.Schema.OpenAPIV3Schema
}

// validateObject checks obj against schema and prunes unknown fields, and
// then, if embedded, the apiVersion and kind of the embedded objects
// (embeddedCauses). A nil schema (impossible once Validate passed) accepts
// anything.
func validateObject(gk api.GroupKind, schema *Schema, obj *api.Object, embedded bool) error {
	if schema == nil {
		return nil
	}
	var causes, embeddedC []api.StatusCause
	kept := obj.Fields[:0:0]
	for _, f := range obj.Fields {
		sub := schema.Properties[f.Name]
		if sub == nil {
			if schema.PreserveUnknownFields {
				kept = append(kept, f)
			}
			continue // pruned
		}
		v, err := decodeValue(f.Value)
		if err != nil {
			return api.NewBadRequest(fmt.Sprintf("field %s: %v", f.Name, err))
		}
		if v == nil && sub.dropsNull() {
			continue // as if absent (schema.go, dropNulls)
		}
		v, c, _ := sub.validate(f.Name, v)
		causes = append(causes, c...)
		if embedded {
			embeddedC = append(embeddedC, embeddedCauses(sub, v, f.Name)...)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return api.NewInternalError(err)
		}
		kept = append(kept, api.Field{Name: f.Name, Value: raw})
	}
	causes = append(rootRequired(schema, kept), causes...)
	if causes = append(causes, embeddedC...); len(causes) > 0 {
		return api.NewInvalid(gk, obj.Metadata.Name, causes)
	}
	obj.Fields = kept
	return nil
}

// rootRequired is a "Required value" for each member the schema's root
// requires that the object lacks, as for any object in it (validate).
// apiVersion, kind and metadata are always there by now.
func rootRequired(schema *Schema, fields []api.Field) []api.StatusCause {
	var causes []api.StatusCause
	for _, req := range schema.Required {
		switch req {
		case "apiVersion", "kind", "metadata":
			continue
		}
		if !slices.ContainsFunc(fields, func(f api.Field) bool { return f.Name == req }) {
			causes = append(causes, api.StatusCause{Type: api.CauseFieldValueRequired, Field: req, Message: "Required value"})
		}
	}
	return causes
}

// lookupPath evaluates the simple JSONPath of a printer column
// (".spec.color"): dotted field names only. Anything else is an empty cell.
func lookupPath(o *api.Object, path string) any {
	parts := strings.Split(strings.TrimPrefix(path, "."), ".")
	if len(parts) == 0 || parts[0] == "" {
		return nil
	}
	var cur any
	switch parts[0] {
	case "metadata":
		raw, _ := json.Marshal(o.Metadata)
		cur, _ = decodeValue(raw)
	default:
		raw := o.Get(parts[0])
		if raw == nil {
			return nil
		}
		cur, _ = decodeValue(raw)
	}
	for _, p := range parts[1:] {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	if n, ok := cur.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i
		}
		f, _ := n.Float64()
		return f
	}
	return cur
}

// prepareDefinition validates a definition being written and fills in
// what the server owns: defaulted names, the conversion strategy, and its
// status (definitionStatus). old is the stored definition when it is an
// update, nil when it is a create.
func prepareDefinition(obj, old *api.Object, builtin func(api.GroupResource) bool) error {
	d, err := Parse(obj)
	if err != nil {
		return api.NewBadRequest(err.Error())
	}
	gk := api.GroupKind{Group: GroupResource.Group, Kind: "CustomResourceDefinition"}
	if causes := d.Validate(builtin); len(causes) > 0 {
		return api.NewInvalid(gk, obj.Metadata.Name, causes)
	}
	var spec map[string]any
	if err := json.Unmarshal(obj.Get("spec"), &spec); err != nil {
		return api.NewBadRequest(err.Error())
	}
	names := d.Spec.Names.defaulted()
	if m, ok := spec["names"].(map[string]any); ok {
		m["singular"], m["listKind"] = names.Singular, names.ListKind
	}
	if _, ok := spec["conversion"]; !ok {
		spec["conversion"] = map[string]any{"strategy": "None"}
	}
	var stored json.RawMessage
	if old != nil {
		stored = old.Get("status")
	}
	status, err := definitionStatus(d, stored)
	if err != nil {
		return err
	}
	for name, v := range map[string]any{"spec": spec, "status": status} {
		raw, err := json.Marshal(v)
		if err != nil {
			return api.NewInternalError(err)
		}
		if err := obj.Set(name, raw); err != nil {
			return api.NewInternalError(err)
		}
	}
	return nil
}

// definitionStatus is the status a definition is written with. A new one
// gets what kube-apiserver 1.37.2 gives it: its storage version as its
// stored version, empty accepted names and no conditions
// (apiextensions-apiserver pkg/registry/customresourcedefinition/
// strategy.go, PrepareForCreate); the Controller then accepts its names
// and, once its resource is served, establishes it (status.go). A write of
// the definition itself keeps the stored status (PrepareForUpdate: only
// .../status writes it), adding a new storage version to storedVersions as
// PrepareForUpdate does; changed names are the Controller's to accept.
func definitionStatus(d *Definition, stored json.RawMessage) (map[string]any, error) {
	var storage string
	for _, v := range d.Spec.Versions {
		if v.Storage {
			storage = v.Name
		}
	}
	if len(stored) > 0 {
		var status map[string]any
		if err := json.Unmarshal(stored, &status); err != nil {
			return nil, api.NewInternalError(fmt.Errorf("status of customresourcedefinition %s: %w", d.Name, err))
		}
		if status != nil {
			versions, _ := status["storedVersions"].([]any)
			if !slices.Contains(versions, any(storage)) {
				status["storedVersions"] = append(versions, storage)
			}
			return status, nil
		}
	}
	return map[string]any{
		"conditions":     nil,
		"acceptedNames":  Names{},
		"storedVersions": []string{storage},
	}, nil
}

// DefinitionsResource declares the customresourcedefinitions resource
// itself. builtin reports whether a group and resource is served by a
// built-in resource (a definition may not shadow one).
func DefinitionsResource(builtin func(api.GroupResource) bool) *registry.Resource {
	return &registry.Resource{
		Group: GroupResource.Group, Version: "v1", Name: GroupResource.Resource, SingularName: "customresourcedefinition",
		Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList",
		ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
		Verbs: registry.AllVerbs, Generation: true,
		ValidateName: registry.ValidateSubdomainName,
		// The status subresource: .../status writes status only, and
		// writes of the definition keep it (definitionStatus).
		Subresources:  []string{registry.SubresourceStatus},
		PrepareCreate: func(obj *api.Object) error { return prepareDefinition(obj, nil, builtin) },
		PrepareUpdate: func(obj, old *api.Object) error {
			oldDef, err := Parse(old)
			if err != nil {
				return api.NewInternalError(err)
			}
			newDef, err := Parse(obj)
			if err != nil {
				return api.NewBadRequest(err.Error())
			}
			if newDef.GroupResource() != oldDef.GroupResource() || newDef.Spec.Scope != oldDef.Spec.Scope {
				return api.NewInvalid(api.GroupKind{Group: GroupResource.Group, Kind: "CustomResourceDefinition"}, obj.Metadata.Name,
					[]api.StatusCause{{Type: api.CauseFieldValueInvalid, Field: "spec", Message: "Invalid value: group, names.plural and scope are immutable"}})
			}
			return prepareDefinition(obj, old, builtin)
		},
		Columns: []registry.Column{registry.NewColumn("Created At", "date", "", "", 0, func(o *api.Object) any {
			return o.Metadata.CreationTimestamp.UTC().Format(time.RFC3339)
		})},
		NoAgeColumn: true,
	}
}
