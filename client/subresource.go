package client

import (
	"context"
	"fmt"

	"listwatch/api"
)

// UpdateStatus replaces an object's status through its status subresource
// (PUT .../{name}/status), the way controllers report what they observed:
// a real kube-apiserver ignores status in a PUT of the object itself for
// kinds with a status subresource (Deployments, Pods, and custom resources
// that ask for one), and ignores everything but status here. Like Update,
// it is refused with 409 Conflict if obj's resourceVersion is stale.
func (rc *ResourceClient) UpdateStatus(ctx context.Context, obj *api.Object) (*api.Object, error) {
	if err := rc.check(); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("client: status update of a nil object")
	}
	return rc.put(ctx, obj, "update the status of", "/status")
}

// Finalize replaces a namespace's spec.finalizers through its finalize
// subresource (PUT /api/v1/namespaces/{name}/finalize), as the namespace
// controller does once the namespace is empty; client-go's
// NamespaceExpansion.Finalize. Only spec changes; on a namespace being
// deleted, emptying spec.finalizers deletes it.
func (rc *ResourceClient) Finalize(ctx context.Context, ns *api.Object) (*api.Object, error) {
	if err := rc.check(); err != nil {
		return nil, err
	}
	if ns == nil {
		return nil, fmt.Errorf("client: finalize of a nil namespace")
	}
	return rc.put(ctx, ns, "finalize", "/finalize")
}
