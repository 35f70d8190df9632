package handlers

import (
	"context"
	"errors"

	"listwatch/api"
	"listwatch/store"
)

// Namespaces in the handlers: what the NamespaceLifecycle admission plugin
// and the namespace controller do in Kubernetes. Creating in a namespace
// that does not exist is 404; deleting a namespace deletes what it holds.

// namespaceExists reports whether namespace ns exists: creating anything in
// a namespace that does not is a 404, as NamespaceLifecycle answers.
func (h *Handlers) namespaceExists(ctx context.Context, ns string) error {
	_, err := h.store.Get(ctx, h.reg.Namespaces().Resource.Key("", ns))
	if errors.Is(err, store.ErrNotFound) {
		return api.NewNotFound(h.reg.Namespaces().Resource.GroupResource(), ns)
	}
	return err
}

// deleteNamespaceContents removes every object in namespace ns, which in
// Kubernetes the namespace controller does after the namespace turns
// Terminating. The toy does it at once, so a deleted namespace leaves
// nothing behind.
func (h *Handlers) deleteNamespaceContents(ctx context.Context, ns string) error {
	for _, rs := range h.reg.Entries() {
		if !rs.Namespaced {
			continue
		}
		page, err := h.store.List(ctx, rs.CollectionPrefix(ns), store.ListOptions{})
		if err != nil {
			return err
		}
		for _, obj := range page.Items {
			_, err := h.store.Delete(ctx, rs.Key(ns, obj.Metadata.Name), store.Preconditions{UID: obj.Metadata.UID})
			if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
				return err
			}
		}
	}
	return nil
}
