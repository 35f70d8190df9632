package etcd

import (
	"context"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"listwatch/api"
	"listwatch/store"
)

// minFilterBatch is the smallest range read while filtering a paged list:
// with a selector, a page of N may need many more keys than N.
const minFilterBatch = 100

// List reads the keys under prefix in key order at one revision: the
// current one (a linearizable read) or opts.Revision. A paged list asks etcd
// for Limit keys and the count of the whole range, whose difference is
// Remaining; the next page is read at the same revision from the last key
// plus "\x00", exactly the two halves of a Kubernetes continue token. With a
// Filter the store reads batches until the page is full, as the etcd3
// store's GetList does.
func (s *Store) List(ctx context.Context, prefix string, opts store.ListOptions) (*store.ListResult, error) {
	if opts.Revision < 0 {
		return nil, invalid("negative revision %d", opts.Revision)
	}
	if opts.Limit < 0 {
		return nil, invalid("negative limit %d", opts.Limit)
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	start := s.key(max(prefix, opts.StartKey))
	end := clientv3.GetPrefixRangeEnd(s.key(prefix))
	rev := opts.Revision
	res := &store.ListResult{Items: []*api.Object{}}

	batch := int64(opts.Limit)
	if opts.Filter != nil && batch > 0 {
		batch = max(batch, minFilterBatch)
	}
	for {
		ropts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithRev(rev)}
		if batch > 0 {
			ropts = append(ropts, clientv3.WithLimit(batch))
		}
		resp, err := s.cli.Get(ctx, start, ropts...)
		if err != nil {
			return nil, s.mapErr(ctx, err, opts.Revision)
		}
		if rev == 0 {
			// Every later batch reads at the revision of the first.
			rev = resp.Header.Revision
		}
		for i, kv := range resp.Kvs {
			key := strings.TrimPrefix(string(kv.Key), s.opts.Prefix)
			obj, err := decode(key, kv.Value, kv.ModRevision)
			if err != nil {
				return nil, err
			}
			if opts.Filter != nil && !opts.Filter(obj) {
				continue
			}
			res.Items = append(res.Items, obj)
			if opts.Limit > 0 && len(res.Items) == opts.Limit {
				// Count is the whole range from start at rev, whatever the
				// limit: the keys after this one are the rest of it.
				res.Revision = rev
				if remaining := resp.Count - int64(i+1); remaining > 0 {
					res.NextKey = key + "\x00"
					res.Remaining = remaining
				}
				return res, nil
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			res.Revision = rev
			return res, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
