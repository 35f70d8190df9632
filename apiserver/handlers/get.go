package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"listwatch/api"
	"listwatch/apiserver/negotiation"
	"listwatch/narrate"
	"listwatch/store"
)

// GET of one object: always the store's current state (Kubernetes may serve
// resourceVersion=0 gets from its watch cache; the answer is the same
// object either way). A resourceVersion the cache has not reached yet is
// waited for, then 504, as for a list (error-504-list-future-rv.json). A missing object is 404 NotFound naming the resource
// (error-404-get-notfound.json). Kubernetes: handlers/get.go GetResource.

func (h *Handlers) serveGet(w http.ResponseWriter, r *http.Request, ri RequestInfo, out negotiation.Output) {
	if rv := r.URL.Query().Get("resourceVersion"); rv != "" {
		n, err := parseResourceVersion(rv)
		switch {
		case err != nil:
		case ri.Entry.Cacher != nil:
			// Not older than rv: wait for the cache to get there (504 after
			// 3 s, like a list), then the store's state is new enough.
			err = ri.Entry.Cacher.WaitFresh(r.Context(), n)
		default:
			// Not watch-cached: the store's state is read now, and one
			// older than rv is 504 at once (etcd3 store.Get,
			// validateMinimumResourceVersion).
			err = h.notOlderThan(r.Context(), n)
		}
		if err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
	}
	res := ri.Entry.Resource
	obj, err := res.Storage(h.store).Get(r.Context(), res.Key(ri.Namespace, ri.Name))
	if errors.Is(err, store.ErrNotFound) {
		err = api.NewNotFound(res.GroupResource(), ri.Name)
	}
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if h.tracer.Enabled() {
		h.tracer.Printf(narrate.HTTP, "GET %s %s rv=%s", res.Name, obj.Key(), obj.Metadata.ResourceVersion)
	}
	if out.Table != "" {
		meta := api.ListMeta{ResourceVersion: obj.Metadata.ResourceVersion}
		negotiation.WriteJSON(w, r, http.StatusOK, res.ToTable([]*api.Object{obj}, meta, out.Table, out.TableInclude, time.Now()))
		return
	}
	negotiation.WriteObject(w, r, http.StatusOK, negotiation.WithKind(res, obj))
}

// notOlderThan is 504 Too large resource version when the store has not
// reached revision rv.
func (h *Handlers) notOlderThan(ctx context.Context, rv int64) error {
	cur, err := h.store.CurrentRevision(ctx)
	if err == nil && cur < rv {
		err = api.NewTooLargeResourceVersion(uint64(rv), uint64(cur), 0)
	}
	return err
}
