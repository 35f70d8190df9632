package handlers

import (
	"context"
	"errors"

	"listwatch/api"
	"listwatch/store"
)

// lookup is what admission reads besides the object it admits (a Pod's
// ServiceAccount), as kube-apiserver's admission plugins read through
// their informers' listers: straight from the store here. A missing
// object, or a resource not served, is nil and no error.
func (h *Handlers) lookup(ctx context.Context, gr api.GroupResource, namespace, name string) (*api.Object, error) {
	e := h.reg.ByGroupResource(gr)
	if e == nil {
		return nil, nil
	}
	obj, err := h.store.Get(ctx, e.Key(namespace, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return obj, err
}
