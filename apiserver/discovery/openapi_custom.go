package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"listwatch/apiserver/registry"
)

// The OpenAPI v3 of custom resources. A CustomResourceDefinition's schema
// is published as its kind's component, so kubectl explain reads a custom
// resource's fields and their descriptions as it reads a Deployment's.
// kube-apiserver builds it in apiextensions-apiserver
// pkg/controller/openapi/builder/builder.go (buildKubeNative and
// buildListSchema): the version's openAPIV3Schema, with apiVersion, kind
// and metadata (a reference to ObjectMeta) added to its properties and
// x-kubernetes-group-version-kind set; a list kind of it; both named after
// the group reversed ("com.example.stable.v1.CronTab"); and the metadata
// types they reference. We take those types from the core group's real
// document (openapi/api-v1.json) instead of writing them.

const (
	schemaRefPrefix = "#/components/schemas/"
	objectMetaName  = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMetaName    = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
	// The descriptions kube-apiserver gives metadata: PartialObjectMetadata's
	// and PartialObjectMetadataList's (metav1beta1 SwaggerDoc; the list's
	// does point at #types-kinds).
	objectMetaDescription = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
	listMetaDescription   = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

// modelName is the component name of a custom kind: the group's labels
// reversed, then version and kind (builder.go, gvkToModelName).
func modelName(group, version, kind string) string {
	labels := strings.Split(group, ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".") + "." + version + "." + kind
}

// customComponents is the "components" member of a custom resources'
// group version document.
func customComponents(resources []*registry.Resource) (json.RawMessage, error) {
	core, err := coreSchemas()
	if err != nil {
		return nil, err
	}
	schemas := map[string]any{}
	for _, res := range resources {
		kind, err := kindSchema(res, core)
		if err != nil {
			return nil, fmt.Errorf("the schema of %s: %w", res.GroupResource(), err)
		}
		schemas[modelName(res.Group, res.Version, res.Kind)] = kind
		schemas[modelName(res.Group, res.Version, res.ListKind)] = listSchema(res, core)
	}
	for _, name := range referenced(core, objectMetaName, listMetaName) {
		schemas[name] = core[name]
	}
	out, err := json.Marshal(map[string]any{"schemas": schemas})
	return out, err
}

// coreSchemas are the schemas of the core group's recorded document.
func coreSchemas() (map[string]json.RawMessage, error) {
	b, err := schemaFiles.ReadFile("openapi/api-v1.json")
	if err != nil {
		return nil, err
	}
	var f struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	return f.Components.Schemas, nil
}

// kindSchema is the kind's component: its definition's schema with the
// properties every object has (builder.go, buildKubeNative).
func kindSchema(res *registry.Resource, core map[string]json.RawMessage) (map[string]any, error) {
	s := map[string]any{"type": "object"}
	if len(res.OpenAPISchema) > 0 {
		d := json.NewDecoder(bytes.NewReader(res.OpenAPISchema))
		d.UseNumber()
		if err := d.Decode(&s); err != nil {
			return nil, err
		}
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			s["properties"] = props
		}
		props["metadata"] = refTo(objectMetaName, objectMetaDescription)
		props["apiVersion"], props["kind"] = typeMeta(core)
	}
	s["x-kubernetes-group-version-kind"] = []map[string]string{{"group": res.Group, "kind": res.Kind, "version": res.Version}}
	return s, nil
}

// listSchema is the list kind's component (builder.go, buildListSchema).
func listSchema(res *registry.Resource, core map[string]json.RawMessage) map[string]any {
	apiVersion, kind := typeMeta(core)
	return map[string]any{
		"description": fmt.Sprintf("%s is a list of %s", res.ListKind, res.Kind),
		"type":        "object",
		"required":    []string{"items"},
		"properties": map[string]any{
			"apiVersion": apiVersion,
			"kind":       kind,
			"items": map[string]any{
				"description": fmt.Sprintf("List of %s. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", res.Name),
				"type":        "array",
				"items":       map[string]any{"$ref": schemaRefPrefix + modelName(res.Group, res.Version, res.Kind)},
			},
			"metadata": refTo(listMetaName, listMetaDescription),
		},
		"x-kubernetes-group-version-kind": []map[string]string{{"group": res.Group, "kind": res.ListKind, "version": res.Version}},
	}
}

// refTo is a property that is a component, as kube-openapi writes one
// with a description of its own beside the reference.
func refTo(name, description string) map[string]any {
	return map[string]any{"description": description, "allOf": []map[string]string{{"$ref": schemaRefPrefix + name}}}
}

// typeMeta is the apiVersion and kind properties every kind has, as the
// core group's ConfigMap declares them (they are TypeMeta's).
func typeMeta(core map[string]json.RawMessage) (apiVersion, kind json.RawMessage) {
	var cm struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(core["io.k8s.api.core.v1.ConfigMap"], &cm)
	return cm.Properties["apiVersion"], cm.Properties["kind"]
}

var schemaRef = regexp.MustCompile(`"\$ref":\s*"([^"]+)"`)

// referenced is the named schemas and every schema they reference, in
// the order found.
func referenced(schemas map[string]json.RawMessage, names ...string) []string {
	var out []string
	queue := slices.Clone(names)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if slices.Contains(out, name) || schemas[name] == nil {
			continue
		}
		out = append(out, name)
		for _, m := range schemaRef.FindAllSubmatch(schemas[name], -1) {
			queue = append(queue, strings.TrimPrefix(string(m[1]), schemaRefPrefix))
		}
	}
	return out
}
