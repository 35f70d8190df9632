package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"listwatch/api"
	"listwatch/store"
)

// Namespaces are the one resource with server-side behaviour of their own.
// In Kubernetes the namespace strategy and the NamespaceLifecycle admission
// plugin provide it; here it is this file.

// namespaceNameLabel is the label every namespace carries with its own
// name, so label selectors can pick namespaces by name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// namespaceFinalizer is the finalizer a new namespace gets.
const namespaceFinalizer = "kubernetes"

// InitialNamespaces exist when the server starts and cannot be deleted.
var InitialNamespaces = []string{"default", "kube-system"}

// prepareNamespace makes a namespace look like a real one (compare
// create-namespace-201.json): the name label, spec.finalizers containing
// "kubernetes" and status.phase Active.
func prepareNamespace(obj *api.Object) error {
	if obj.Metadata.Labels == nil {
		obj.Metadata.Labels = map[string]string{}
	}
	obj.Metadata.Labels[namespaceNameLabel] = obj.Metadata.Name

	spec := map[string]any{}
	if raw := obj.Get("spec"); raw != nil && string(raw) != "null" {
		if err := json.Unmarshal(raw, &spec); err != nil {
			return api.NewBadRequest(fmt.Sprintf("spec: %v", err))
		}
	}
	finalizers, _ := spec["finalizers"].([]any)
	if !slices.Contains(finalizers, any(namespaceFinalizer)) {
		finalizers = append(finalizers, namespaceFinalizer)
	}
	spec["finalizers"] = finalizers
	if err := setJSON(obj, "spec", spec); err != nil {
		return err
	}
	return setJSON(obj, "status", map[string]any{"phase": "Active"})
}

// setJSON sets a top-level field of obj to v encoded as JSON.
func setJSON(obj *api.Object, field string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return api.NewInternalError(err)
	}
	return obj.Set(field, b)
}

// newNamespace is a namespace object as the server creates it at start.
func newNamespace(name string) *api.Object {
	obj := &api.Object{APIVersion: "v1", Kind: "Namespace", Metadata: api.ObjectMeta{Name: name}}
	// prepareNamespace cannot fail on an object without a spec.
	_ = prepareNamespace(obj)
	return obj
}

// SeedNamespaces creates the namespaces that exist from the start.
func SeedNamespaces(ctx context.Context, st store.Interface, ns *Resource) error {
	for _, name := range InitialNamespaces {
		if _, err := st.Create(ctx, ns.Key("", name), newNamespace(name)); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}
