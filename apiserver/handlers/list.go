package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/apiserver/negotiation"
	"listwatch/narrate"
	"listwatch/store"
)

// LIST: GET on a collection. What is read, and at which revision, depends
// on resourceVersion exactly as in the table "Semantics for get and list" of
// the Kubernetes API concepts doc (cacher/delegator/interface.go
// ShouldDelegateList); which copy of the data answers is ours:
//
//	resourceVersion   resourceVersionMatch   limit   served by
//	unset             -                      any     the store, current revision (a consistent read), paged
//	"0"               unset / NotOlderThan   ignored the watch cache, whatever it has
//	N                 NotOlderThan           ignored the watch cache, once it has reached N (≤3 s, else 504)
//	N                 unset                  0       the watch cache, as NotOlderThan
//	N                 unset                  >0      the store at exactly revision N (legacy exact), paged
//	N                 Exact                  any     the store at exactly revision N (410 if compacted), paged
//	continue=<token>  -                      any     the store at the token's revision (410 if compacted)
//
// kube-apiserver 1.37 answers the rows that say "the store" from its watch
// cache as well: a consistent list once the cache has caught up with etcd's
// current revision, an exact revision or a continue token from the cache's
// snapshot at that revision while it has one (storage/cacher/delegator.go
// CacheDelegator.GetList; docs/03-apiserver-and-watch-cache.md). The
// answers are the same; here the store does the work.
//
// A resource that is not watch-cached (Events) has no cache to answer the
// other rows either: its store answers them too, with the current state,
// paged, and a 504 for a resourceVersion it has not reached (listNotCached).
//
// Kubernetes: handlers/get.go ListResource, registry/generic/registry/store.go
// List, storage/cacher GetList, storage/etcd3 store.GetList.

// tooOldListMessage is the 410 of a list at a compacted revision.
const tooOldListMessage = "The resourceVersion for the provided list is too old."

// expiredContinueMessage is the 410 of a continue token whose revision was
// compacted; the Status carries a fresh token to continue inconsistently.
const expiredContinueMessage = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

// listResult is what a list produced, before encoding.
type listResult struct {
	items []*api.Object
	meta  api.ListMeta
	from  string // "store" or "cache", for the narration
}

func (h *Handlers) serveList(w http.ResponseWriter, r *http.Request, ri RequestInfo, p listParams, out negotiation.Output) {
	lr, err := h.list(r.Context(), ri, p)
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	res := ri.Entry.Resource
	if h.tracer.Enabled() {
		h.tracer.Printf(narrate.HTTP, "LIST %s%s → %d item(s) at rv %s from the %s",
			res.Name, nsSuffix(ri.Namespace), len(lr.items), lr.meta.ResourceVersion, lr.from)
	}
	release, err := h.bigLists.take(r.Context(), len(lr.items))
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	defer release()
	if out.Metadata != "" {
		negotiation.WritePartialList(w, r, out, lr.meta, lr.items)
		return
	}
	if out.Table != "" {
		negotiation.WriteJSON(w, r, http.StatusOK, res.ToTable(lr.items, lr.meta, out.Table, out.TableInclude, time.Now()))
		return
	}
	negotiation.WriteList(w, r, res.ListKind, res.APIVersion(), lr.meta, lr.items, h.protobufItems)
}

// list reads the collection from the store or the watch cache, following
// the table above.
func (h *Handlers) list(ctx context.Context, ri RequestInfo, p listParams) (*listResult, error) {
	res := ri.Entry.Resource
	prefix := res.CollectionPrefix(ri.Namespace)
	switch {
	case p.continueToken != "":
		if p.resourceVersion != "" && p.resourceVersion != "0" {
			return nil, api.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		from, rv, err := decodeContinue(p.continueToken, prefix)
		if err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		readAt := rv
		if rv == inconsistentRV {
			readAt = 0
		}
		lr, err := h.listStore(ctx, ri, p, readAt, from)
		if errors.Is(err, store.ErrCompacted) {
			st := api.NewResourceExpired(expiredContinueMessage)
			if tok, terr := encodeContinue(from, prefix, inconsistentRV); terr == nil {
				st.Metadata.Continue = tok
			}
			return nil, st
		}
		return lr, err

	case p.resourceVersion == "":
		return h.listStore(ctx, ri, p, 0, "")
	}

	rv, err := listResourceVersion(p.resourceVersion)
	if err != nil {
		return nil, err
	}
	exact := p.rvMatch == api.ResourceVersionMatchExact ||
		(p.rvMatch == "" && p.limit > 0 && rv != 0)
	if exact {
		return h.listStore(ctx, ri, p, rv, "")
	}
	if ri.Entry.Cacher == nil {
		return h.listNotCached(ctx, ri, p, rv)
	}
	items, at, err := ri.Entry.Cacher.List(ctx, rv, p.matcher(ri.Namespace))
	if err != nil {
		return nil, err
	}
	return &listResult{items: items, meta: api.ListMeta{ResourceVersion: strconv.FormatInt(at, 10)}, from: "cache"}, nil
}

// listNotCached is a list "not older than" rv of a resource that is not
// watch-cached: kube-apiserver's etcd3 storage reads etcd's current state
// (paged, where the watch cache would ignore the limit) and refuses one
// older than rv with 504 "Too large resource version"
// (k8s.io/apiserver v0.37.2 pkg/storage/etcd3/store.go GetList,
// validateMinimumResourceVersion).
func (h *Handlers) listNotCached(ctx context.Context, ri RequestInfo, p listParams, rv int64) (*listResult, error) {
	lr, err := h.listStore(ctx, ri, p, 0, "")
	if err != nil {
		return nil, err
	}
	if cur, _ := strconv.ParseInt(lr.meta.ResourceVersion, 10, 64); cur < rv {
		return nil, api.NewTooLargeResourceVersion(uint64(rv), uint64(cur), 0)
	}
	return lr, nil
}

// listStore reads one page from the store at revision (0: current),
// starting at startKey, and builds the continue token of the next page.
func (h *Handlers) listStore(ctx context.Context, ri RequestInfo, p listParams, revision int64, startKey string) (*listResult, error) {
	res := ri.Entry.Resource
	prefix := res.CollectionPrefix(ri.Namespace)
	opts := store.ListOptions{Revision: revision, StartKey: startKey, Limit: int(min(p.limit, maxInt))}
	if !p.selectorsEmpty() {
		opts.Filter = p.matcher("")
	}
	page, err := res.Storage(h.store).List(ctx, prefix, opts)
	var future *store.FutureRevisionError
	switch {
	case errors.Is(err, store.ErrCompacted) && startKey != "":
		// The caller (a continue) answers with a fresh token.
		return nil, err
	case errors.Is(err, store.ErrCompacted):
		return nil, api.NewResourceExpired(tooOldListMessage)
	case errors.As(err, &future):
		return nil, api.NewTooLargeResourceVersion(uint64(future.Requested), uint64(future.Current), 1)
	case err != nil:
		return nil, err
	}
	lr := &listResult{items: page.Items, meta: api.ListMeta{ResourceVersion: strconv.FormatInt(page.Revision, 10)}, from: "store"}
	if page.NextKey != "" && len(page.Items) > 0 {
		last := page.Items[len(page.Items)-1]
		token, err := encodeContinue(res.Key(last.Metadata.Namespace, last.Metadata.Name)+"\x00",
			strings.TrimSuffix(prefix, "/"), page.Revision)
		if err != nil {
			return nil, err
		}
		lr.meta.Continue = token
		if p.selectorsEmpty() {
			remaining := page.Remaining
			lr.meta.RemainingItemCount = &remaining
		}
	}
	return lr, nil
}

// maxInt caps a ?limit so it fits the store's int.
const maxInt = int64(^uint(0) >> 1)

// nsSuffix renders " in <ns>" for narration.
func nsSuffix(ns string) string {
	if ns == "" {
		return ""
	}
	return " in " + ns
}
