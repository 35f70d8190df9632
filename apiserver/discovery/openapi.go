package discovery

import (
	"strings"

	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
)

// A minimal OpenAPI v3, just enough for kubectl create -f and apply -f.
//
// Before sending an object, kubectl validates it. It first asks the
// server's OpenAPI v3 whether the resource's PATCH accepts the
// fieldValidation query parameter; if so, it leaves validation to the
// server (and sends ?fieldValidation=Strict, which a schemaless server
// trivially honours). Otherwise it validates client-side against the
// OpenAPI v2 schemas, and without those it refuses ("failed to download
// openapi"). So for each resource we publish one path whose patch
// operation names its group, version and kind and lists fieldValidation,
// and no schemas: `kubectl explain` has nothing to explain.
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
	OpenAPI string                     `json:"openapi"`
	Info    map[string]string          `json:"info"`
	Paths   map[string]openAPIPathItem `json:"paths"`
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
	for _, rs := range resources {
		res := rs.Resource
		gvPath := openAPIPath(res)
		doc := docs[gvPath]
		if doc == nil {
			doc = &openAPIDoc{OpenAPI: "3.0.0", Info: map[string]string{"title": "Kubernetes (listwatch)", "version": "v1.32.0"},
				Paths: map[string]openAPIPathItem{}}
			docs[gvPath] = doc
			disco.Paths[gvPath] = openAPIGroupVersion{ServerRelativeURL: OpenAPIPrefix + "/" + gvPath}
		}
		objectPath := "/" + gvPath + "/" + res.Name + "/{name}"
		if res.Namespaced {
			objectPath = "/" + gvPath + "/namespaces/{namespace}/" + res.Name + "/{name}"
		}
		doc.Paths[objectPath] = openAPIPathItem{Patch: openAPIOperation{
			OperationID: "patch" + res.Kind,
			GVK:         map[string]string{"group": res.Group, "version": res.Version, "kind": res.Kind},
			Parameters: []openAPIParameter{{Name: "fieldValidation", In: "query", Schema: map[string]string{"type": "string"},
				Description: "accepted; the server is schemaless, so every field is known"}},
		}}
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
	return &Doc{body: doc}
}
