// Package crd serves CustomResourceDefinitions (apiextensions.k8s.io/v1):
// the definitions themselves as a resource (DefinitionsResource, which
// validates them), and a Controller that follows them in the store, has
// the server serve each one's custom resource, and then marks the
// definition Established. A custom resource is served as a built-in kind
// is: list, watch, CRUD and patch through the same handlers and watch
// cache, with the definition's structural schema validating every write
// (422 on a wrong type), pruning unknown fields and filling in its
// defaults (on reads from storage too, defaulting.go), its printer
// columns in Tables, generation counting, and objects encoded
// with sorted keys as unstructured objects are. Deleting a definition
// deletes its objects (open watches see one DELETED each, then their end)
// and removes the resource from discovery.
//
// Where it sits: on the server, beside the registry. The Controller is to
// the store what an informer is to an apiserver: list, then watch, re-list
// when the watch breaks; Host is how it changes what the server serves.
//
// It mirrors k8s.io/apiextensions-apiserver: pkg/apiserver/
// customresource_handler.go (crdHandler: serving a definition's resource),
// pkg/controller/finalizer (customresourcecleanup: deleting the objects),
// pkg/controller/status (NamesAccepted, Established), pkg/apis/apiextensions/
// validation (what a definition must be), and pkg/apiserver/schema (the
// structural schema, validation and pruning). Every served version is
// served, each with a watch cache of its own, over one collection kept in
// the storage version (conversion.go). Differences: versions convert by
// apiVersion alone, the "None" strategy (no conversion webhooks); one
// Controller writes what kube-apiserver's naming and establishing
// controllers write (status.go): a new definition has no conditions, then
// its names are accepted, and it is Established once its resource is
// served and in discovery, which is when the real server's discovery
// lists it too (though the real one may answer its first request with
// 429, fixture crd-first-list-429-storage-initializing.json); names never
// conflict; the cleanup happens
// after the definition is gone instead of behind a finalizer; printer
// columns take dotted paths only. Unknown and duplicate fields are pruned
// and reported as for built-in kinds, per ?fieldValidation
// (fieldvalidation.go). The status subresource, when a version asks for
// it, is the handlers' (.../{name}/status changes status only, and writes
// of the object keep the stored status), as for Deployments; so is the
// definitions' own.
package crd
