package demo

import (
	"context"
	"fmt"

	"listwatch/api"
	"listwatch/client"
)

// CreateFresh creates obj. On a shared apiserver (the workshop's) an object
// of the same name may be there already, left by an earlier run or by the
// attendee's own kubectl: it is deleted first, so that the run starts from
// a resourceVersion of now. Reusing it would start from its old
// resourceVersion, which may be older than the server's last compaction
// (every five minutes), and a watch from there gets 410 Expired.
func CreateFresh(ctx context.Context, rc *client.ResourceClient, obj *api.Object) (*api.Object, error) {
	got, err := rc.Create(ctx, obj)
	if !client.IsAlreadyExists(err) {
		return got, err
	}
	if err := rc.Delete(ctx, obj.Metadata.Name, client.DeleteOptions{}); err != nil && !client.IsNotFound(err) {
		return nil, fmt.Errorf("deleting the %s left by an earlier run: %w", obj.Metadata.Name, err)
	}
	return rc.Create(ctx, obj)
}

// CleanUp deletes what a run created on a shared apiserver, so that the
// attendee's namespace is as the run found it (the workshop's next
// `kubectl create` of the same name works). Errors are ignored: the run is
// over, and CreateFresh copes with anything left.
func CleanUp(ctx context.Context, rc *client.ResourceClient, name string) {
	_ = rc.Delete(ctx, name, client.DeleteOptions{})
}
