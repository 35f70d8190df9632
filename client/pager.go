package client

import (
	"context"
	"fmt"

	"listwatch/api"
	"listwatch/narrate"
)

// EachPage lists the collection pageSize objects at a time and hands every
// page to fn, following metadata.continue until the server says there is
// no more. It is client-go's tools/pager.ListPager without the full-list
// fallback: paging keeps any one answer small, which matters for big
// collections.
//
// Every page is part of one consistent snapshot: the first page is read at
// opts.ResourceVersion (or at "now"), and each continue token carries that
// revision, which is why later pages must not repeat resourceVersion (the
// server answers 400 if they do). If the snapshot was compacted away
// before the last page (a 410 Expired), the error is returned and the
// caller lists again.
//
// A pageSize of 0 or less reads everything in one request. fn returning an
// error stops the walk with that error.
func (rc *ResourceClient) EachPage(ctx context.Context, opts api.ListOptions, pageSize int64, fn func(*api.List) error) error {
	opts.Limit = max(pageSize, 0)
	opts.Continue = ""
	for page := 1; ; page++ {
		list, err := rc.List(ctx, opts)
		if err != nil {
			if page > 1 {
				return fmt.Errorf("client: listing page %d of %s: %w", page, rc.gvr.GroupResource(), err)
			}
			return err
		}
		if rc.c.tr.Enabled() {
			rc.c.tr.Printf(narrate.HTTP, "list %s page %d: %d item(s) at rv=%s, more=%t",
				rc.gvr.GroupResource(), page, len(list.Items), list.Metadata.ResourceVersion, list.Metadata.Continue != "")
		}
		if err := fn(list); err != nil {
			return err
		}
		if list.Metadata.Continue == "" {
			return nil
		}
		opts.Continue = list.Metadata.Continue
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	}
}

// ListAll reads the whole collection in pages of pageSize and returns it as
// one List: the items of every page, in order, and the resourceVersion of
// the snapshot they all belong to (the one to start a watch from).
func (rc *ResourceClient) ListAll(ctx context.Context, opts api.ListOptions, pageSize int64) (*api.List, error) {
	var all *api.List
	err := rc.EachPage(ctx, opts, pageSize, func(page *api.List) error {
		if all == nil {
			all = page
			return nil
		}
		all.Items = append(all.Items, page.Items...)
		// The last page keeps the first page's resourceVersion; keep the
		// first one in any case, it is the snapshot's.
		return nil
	})
	if err != nil {
		return nil, err
	}
	all.Metadata.Continue = ""
	all.Metadata.RemainingItemCount = nil
	return all, nil
}
