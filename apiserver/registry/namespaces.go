package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"listwatch/api"
	"listwatch/store"
)

// Namespaces are the one resource with server-side behaviour of their own.
// In Kubernetes the namespace strategy and storage
// (pkg/registry/core/namespace/strategy.go, storage/storage.go) and the
// NamespaceLifecycle admission plugin
// (apiserver/pkg/admission/plugin/namespace/lifecycle) provide it; here it
// is this file and the handlers' namespaces.go.
//
// A namespace's life: created Active with the finalizer "kubernetes" in
// spec.finalizers (not metadata.finalizers: only the namespace controller
// removes it, through the finalize subresource). The first DELETE only
// marks it: deletionTimestamp set, status.phase Terminating; from then on
// nothing new may be created in it (403, cause NamespaceTerminating). The
// namespace controller (controllers/namespace, kube-controller-manager's
// in Kubernetes) deletes everything in it, then PUTs .../finalize with
// spec.finalizers empty, and that write deletes the namespace.

// namespaceNameLabel is the label every namespace carries with its own
// name, so label selectors can pick namespaces by name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// namespaceFinalizer is the finalizer a new namespace gets
// (core/v1 FinalizerKubernetes).
const namespaceFinalizer = "kubernetes"

// SubresourceFinalize: PUT .../namespaces/{name}/finalize replaces
// spec.finalizers and nothing else (namespaceFinalizeStrategy).
const SubresourceFinalize = "finalize"

// The phases of a namespace (core/v1 NamespacePhase).
const (
	NamespaceActive      = "Active"
	NamespaceTerminating = "Terminating"
)

// InitialNamespaces exist when the server starts. kube-apiserver's system
// namespaces controller makes four (k8s.io/kubernetes
// pkg/controlplane/controller/systemnamespaces: default, kube-system,
// kube-public, kube-node-lease); ours makes the two that every client
// needs, so that a new server's first object is at the resourceVersion the
// chapters, the tour and the workshop show (each namespace created costs a
// revision). Creating the other two is one kubectl create namespace each.
var InitialNamespaces = []string{"default", "kube-system"}

// ImmortalNamespaces cannot be deleted: 403 "this namespace may not be
// deleted", as the NamespaceLifecycle admission plugin answers
// (k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle, Register).
// kube-node-lease is not among them.
var ImmortalNamespaces = []string{"default", "kube-public", "kube-system"}

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
	return setJSON(obj, "status", map[string]any{"phase": NamespaceActive})
}

// prepareNamespaceUpdate keeps what only the server and the namespace
// controller change: spec.finalizers (through finalize) and status
// (through status), as namespaceStrategy.PrepareForUpdate does; and the
// name label.
func prepareNamespaceUpdate(obj, old *api.Object) error {
	if obj.Metadata.Labels == nil {
		obj.Metadata.Labels = map[string]string{}
	}
	obj.Metadata.Labels[namespaceNameLabel] = obj.Metadata.Name
	for _, f := range []string{"spec", "status"} {
		if raw := old.Get(f); raw != nil {
			if err := obj.Set(f, raw); err != nil {
				return api.NewInternalError(err)
			}
		} else {
			obj.Remove(f)
		}
	}
	return nil
}

// IsNamespaces reports whether r is core/v1 namespaces.
func (r *Resource) IsNamespaces() bool { return r.Group == "" && r.Name == "namespaces" }

// NamespacePhase is a namespace's status.phase.
func NamespacePhase(ns *api.Object) string {
	var st struct {
		Phase string `json:"phase"`
	}
	_ = json.Unmarshal(ns.Get("status"), &st) // stored by us: absent is ""
	return st.Phase
}

// SpecFinalizers is a namespace's spec.finalizers.
func SpecFinalizers(ns *api.Object) []string {
	var spec struct {
		Finalizers []string `json:"finalizers"`
	}
	_ = json.Unmarshal(ns.Get("spec"), &spec) // stored by us: absent is none
	return spec.Finalizers
}

// MarkNamespaceTerminating is what the first DELETE of a namespace
// stores: cur with deletionTimestamp now and status.phase Terminating
// (the REST storage's Delete). Its contents stay until the namespace
// controller has deleted them.
func MarkNamespaceTerminating(cur *api.Object, now time.Time) (*api.Object, error) {
	next := cur.DeepCopy()
	at := now.UTC().Truncate(time.Second)
	next.Metadata.DeletionTimestamp = &at
	status := map[string]any{}
	if raw := cur.Get("status"); raw != nil {
		_ = json.Unmarshal(raw, &status) // stored by us; unreadable is replaced
	}
	status["phase"] = NamespaceTerminating
	if err := setJSON(next, "status", status); err != nil {
		return nil, err
	}
	return next, nil
}

// FinalizeNamespace is a write through the finalize subresource: the
// stored namespace cur with next's spec (its finalizers) and nothing else.
func FinalizeNamespace(next, cur *api.Object) (*api.Object, error) {
	out := cur.DeepCopy()
	if raw := next.Get("spec"); raw != nil {
		if err := out.Set("spec", raw); err != nil {
			return nil, api.NewBadRequest(err.Error())
		}
	} else {
		out.Remove("spec")
	}
	return out, nil
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
