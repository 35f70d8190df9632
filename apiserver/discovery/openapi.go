package discovery

import (
	"embed"
	"encoding/json"
	"strings"

	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
)

// OpenAPI v3: the paths kubectl create -f and apply -f look at, and the
// real schemas of the served kinds for kubectl explain.
//
// Before sending an object, kubectl validates it. It first asks the
// server's OpenAPI v3 whether the resource's PATCH accepts the
// fieldValidation query parameter; if so, it leaves validation to the
// server (and sends ?fieldValidation=Strict, which the server honours:
// handlers/fieldvalidation.go). Otherwise it validates client-side against
// the OpenAPI v2 schemas, and without those it refuses ("failed to
// download openapi"). So for each resource we publish one path whose
// patch operation names its group, version and kind and lists
// fieldValidation.
//
// kubectl explain finds the kind's schema in components.schemas by its
// x-kubernetes-group-version-kind and follows the $refs. Those schemas
// are the real server's own (openapi/*.json, cut by tools/openapigen out
// of the documents a kube-apiserver v1.32 served: the served kinds and
// everything they reference), not written here; a custom resource's are
// its definition's (openapi_custom.go).
// Kubernetes: kube-openapi handler3; kubectl's check is cli-runtime
// resource/query_param_verifier_v3.go.

// OpenAPIPrefix is where the OpenAPI v3 documents live.
const OpenAPIPrefix = "/openapi/v3"

type openAPIDiscovery struct {
	Paths map[string]openAPIGroupVersion `json:"paths"`
}

type openAPIGroupVersion struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

type openAPIDoc struct {
	OpenAPI    string                     `json:"openapi"`
	Info       map[string]string          `json:"info"`
	Paths      map[string]openAPIPathItem `json:"paths"`
	Components json.RawMessage            `json:"components,omitempty"`
}

// schemaFiles are the real schemas per group version, named after its
// OpenAPI path with "-" for "/" (api-v1.json, apis-apps-v1.json).
//
//go:embed openapi/*.json
var schemaFiles embed.FS

// components returns the "components" member of the group version's
// document: its schemas, or nil for a group version without a file (a
// custom resource's).
func components(gvPath string) json.RawMessage {
	b, err := schemaFiles.ReadFile("openapi/" + strings.ReplaceAll(gvPath, "/", "-") + ".json")
	if err != nil {
		return nil
	}
	var f struct {
		Components json.RawMessage `json:"components"`
	}
	if json.Unmarshal(b, &f) != nil {
		return nil
	}
	return f.Components
}

type openAPIPathItem struct {
	Patch openAPIOperation `json:"patch"`
}

type openAPIOperation struct {
	OperationID string             `json:"operationId"`
	GVK         map[string]string  `json:"x-kubernetes-group-version-kind"`
	Parameters  []openAPIParameter `json:"parameters"`
}

type openAPIParameter struct {
	Name        string            `json:"name"`
	In          string            `json:"in"`
	Description string            `json:"description"`
	Schema      map[string]string `json:"schema"`
}

// openAPIPath is the OpenAPI name of a group version: "api/v1",
// "apis/apps/v1".
func openAPIPath(res *registry.Resource) string {
	if res.Group == "" {
		return "api/" + res.Version
	}
	return "apis/" + res.Group + "/" + res.Version
}

// OpenAPI is the OpenAPI v3 discovery document and one document per group
// version, keyed by URL path.
type OpenAPI map[string][]byte

// BuildOpenAPI encodes the OpenAPI documents of the resources.
func BuildOpenAPI(resources []*registry.Entry) OpenAPI {
	docs := map[string]*openAPIDoc{}
	disco := openAPIDiscovery{Paths: map[string]openAPIGroupVersion{}}
	customByPath := map[string][]*registry.Resource{}
	for _, rs := range resources {
		res := rs.Resource
		gvPath := openAPIPath(res)
		doc := docs[gvPath]
		if doc == nil {
			doc = &openAPIDoc{OpenAPI: "3.0.0", Info: map[string]string{"title": "Kubernetes (listwatch)", "version": "1.37"},
				Paths: map[string]openAPIPathItem{}, Components: components(gvPath)}
			docs[gvPath] = doc
			disco.Paths[gvPath] = openAPIGroupVersion{ServerRelativeURL: OpenAPIPrefix + "/" + gvPath}
		}
		if res.IsCustom() {
			customByPath[gvPath] = append(customByPath[gvPath], res)
		}
		objectPath := "/" + gvPath + "/" + res.Name + "/{name}"
		if res.Namespaced {
			objectPath = "/" + gvPath + "/namespaces/{namespace}/" + res.Name + "/{name}"
		}
		doc.Paths[objectPath] = openAPIPathItem{Patch: openAPIOperation{
			OperationID: "patch" + res.Kind,
			GVK:         map[string]string{"group": res.Group, "version": res.Version, "kind": res.Kind},
			Parameters: []openAPIParameter{{Name: "fieldValidation", In: "query", Schema: map[string]string{"type": "string"},
				Description: "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn (the default) - Strict"}},
		}}
	}
	for gvPath, custom := range customByPath {
		// The definitions were valid JSON when they were written, so this
		// cannot fail; if it did, kubectl explain would say it finds no
		// schema, and nothing else would change.
		if c, err := customComponents(custom); err == nil {
			docs[gvPath].Components = c
		}
	}
	out := OpenAPI{OpenAPIPrefix: negotiation.MustJSON(disco)}
	for gvPath, doc := range docs {
		out[OpenAPIPrefix+"/"+gvPath] = negotiation.MustJSON(doc)
	}
	return out
}

// Lookup finds the document at a URL path under /openapi/v3; nil if there
// is none.
func (o OpenAPI) Lookup(path string) *Doc {
	doc, ok := o[strings.TrimSuffix(path, "/")]
	if !ok {
		return nil
	}
	if strings.TrimSuffix(path, "/") == OpenAPIPrefix {
		return &Doc{body: doc, contentType: openAPIIndexContentType}
	}
	return &Doc{body: doc}
}

// openAPIIndexContentType is what kube-apiserver 1.37 labels the index
// with: its aggregator writes the JSON with http.ServeContent and no
// Content-Type, so Go sniffs the bytes as text (k8s.io/kube-aggregator
// pkg/controllers/openapiv3/aggregator/aggregator.go, handleDiscovery).
const openAPIIndexContentType = "text/plain; charset=utf-8"
