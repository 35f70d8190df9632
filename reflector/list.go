package reflector

import (
	"context"
	"fmt"

	"listwatch/api"
	"listwatch/narrate"
)

// list fetches the whole resource and hands it to the Store with Replace.
func (r *Reflector) list(ctx context.Context) error {
	rv := r.relistResourceVersion()
	pageSize := r.pageSizeFor(rv)
	opts := r.baseOptions()
	opts.ResourceVersion = rv
	list, paginated, err := r.pagedList(ctx, opts, pageSize)
	if isExpiredError(err) || isTooLargeResourceVersionError(err) {
		// The resourceVersion we asked for is gone (410) or not reached
		// yet (504 "too large"). Either way, ask for the latest state: a
		// consistent read from storage at resourceVersion "".
		r.setLastSyncRVUnavailable(true)
		r.tr.Printf(narrate.Reflector, "%slist at rv %q: %v; re-list at rv \"\" (latest)", r.prefix, rv, err)
		opts.ResourceVersion = r.relistResourceVersion()
		list, paginated, err = r.pagedList(ctx, opts, pageSize)
	}
	if err != nil {
		return fmt.Errorf("%s: list at resourceVersion %q: %w", r.name, opts.ResourceVersion, err)
	}
	// Only a paged answer to resourceVersion "0" says something about the
	// server (no watch cache); a paged answer to "" is normal.
	if opts.ResourceVersion == "0" && paginated {
		r.mu.Lock()
		r.paginatedResult = true
		r.mu.Unlock()
	}
	r.setLastSyncRVUnavailable(false)

	items := make([]*api.Object, 0, len(list.Items))
	for _, it := range list.Items {
		if it != nil {
			items = append(items, it)
		}
	}
	listRV := list.Metadata.ResourceVersion
	r.tr.Printf(narrate.Reflector, "%slisted %s at rv %s (asked for rv %q)", r.prefix, plural(len(items), "item"), listRV, opts.ResourceVersion)
	if err := r.store.Replace(items, listRV); err != nil {
		return fmt.Errorf("%s: replacing the store with the list at resourceVersion %s: %w", r.name, listRV, err)
	}
	r.setLastSyncResourceVersion(listRV)
	return nil
}

// pageSizeFor applies client-go's paging rule (see Options.PageSize).
func (r *Reflector) pageSizeFor(rv string) int64 {
	r.mu.RLock()
	paginated := r.paginatedResult
	r.mu.RUnlock()
	switch {
	case r.opts.PageSize > 0:
		return r.opts.PageSize
	case r.opts.PageSize < 0:
		return 0
	case paginated:
		return DefaultPageSize
	case rv != "" && rv != "0":
		// A list at a specific resourceVersion without a limit can be
		// served from the watch cache; with a limit it would go to
		// storage. Not going back in time is guaranteed either way.
		return 0
	default:
		return DefaultPageSize
	}
}

// pagedList gathers a list through its continue tokens, like client-go's
// tools/pager: the first request carries the resourceVersion and limit,
// the next ones only the continue token (the server refuses both at once).
// If a continue token has expired (the revision the first page was read at
// was compacted meanwhile), it gives up paging and fetches one full list at
// the resourceVersion first asked for. It reports whether the answer came
// in more than one page.
func (r *Reflector) pagedList(ctx context.Context, opts api.ListOptions, pageSize int64) (*api.List, bool, error) {
	requestedRV, requestedMatch := opts.ResourceVersion, opts.ResourceVersionMatch
	opts.Limit = pageSize
	var out *api.List
	paginated := false
	for page := 1; ; page++ {
		if err := ctx.Err(); err != nil {
			return nil, paginated, err
		}
		l, err := r.lw.List(ctx, opts)
		if err == nil && l == nil {
			err = errNoList
		}
		if err != nil {
			if !api.IsResourceExpired(err) || opts.Continue == "" {
				return nil, paginated, err
			}
			r.tr.Printf(narrate.Reflector, "%scontinue token expired at page %d (%v); one full list at rv %q", r.prefix, page, err, requestedRV)
			opts.Limit, opts.Continue = 0, ""
			opts.ResourceVersion, opts.ResourceVersionMatch = requestedRV, requestedMatch
			l, err = r.lw.List(ctx, opts)
			if err == nil && l == nil {
				err = errNoList
			}
			return l, paginated, err
		}
		if l.Metadata.Continue == "" && out == nil {
			return l, false, nil // one page: the common case
		}
		r.tr.Printf(narrate.Reflector, "%slist page %d: %s, continue=%t", r.prefix, page, plural(len(l.Items), "item"), l.Metadata.Continue != "")
		if out == nil {
			// Every page is consistent with the first page's revision.
			out = &api.List{APIVersion: l.APIVersion, Kind: l.Kind,
				Metadata: api.ListMeta{ResourceVersion: l.Metadata.ResourceVersion}}
		}
		out.Items = append(out.Items, l.Items...)
		if l.Metadata.Continue == "" {
			return out, paginated, nil
		}
		paginated = true
		opts.Continue = l.Metadata.Continue
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	}
}
