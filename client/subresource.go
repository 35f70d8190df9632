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
