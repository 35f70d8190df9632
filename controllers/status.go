package controllers

import (
	"context"
	"sync/atomic"

	"listwatch/api"
	"listwatch/client"
)

// StatusWriter writes an object's status the way a controller must: through
// the status subresource (PUT .../status), since a real kube-apiserver drops
// status from a PUT of the object itself. Against a server without that
// subresource (ours answers 404) it falls back, once and from then on, to a
// PUT of the whole object, which such a server stores as sent. The zero
// value is ready to use.
type StatusWriter struct {
	noSubresource atomic.Bool
}

// Update writes obj's status; obj must carry the resourceVersion it was
// read at, so a concurrent change makes it fail with 409 Conflict.
func (w *StatusWriter) Update(ctx context.Context, rc *client.ResourceClient, obj *api.Object) (*api.Object, error) {
	if !w.noSubresource.Load() {
		out, err := rc.UpdateStatus(ctx, obj)
		if !client.IsNotFound(err) {
			return out, err
		}
	}
	// 404 from .../status: either the object is gone (then this PUT says
	// 404 too) or the server has no status subresource.
	out, err := rc.Update(ctx, obj)
	if err == nil {
		w.noSubresource.Store(true)
	}
	return out, err
}
