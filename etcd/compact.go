package etcd

import (
	"context"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"listwatch/narrate"
	"listwatch/store"
)

// compactRevKey is where the newest compaction is recorded, the key
// kube-apiserver's compactor uses: every apiserver on the cluster learns of
// a compaction from it, whoever made it.
const compactRevKey = "compact_rev_key"

// Compact compacts etcd's history up to rev (etcd Compact), then records rev
// under compact_rev_key. Afterwards a list at a revision below rev, or a
// watch from one, fails with store.CompactedError; etcd's own errors for a
// revision already compacted or not reached yet become store.CompactedError
// and store.FutureRevisionError. Recording the compaction is a write, so it
// spends one revision: revisions stay increasing but not dense.
func (s *Store) Compact(rev int64) error {
	if err := s.check(context.Background()); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.RequestTimeout)
	defer cancel()
	if _, err := s.cli.Compact(ctx, rev); err != nil {
		if isCompacted(err) {
			return &store.CompactedError{Requested: rev, Compacted: max(s.compacted.Load(), rev)}
		}
		return s.mapErr(ctx, err, rev)
	}
	s.noteCompacted(rev)
	k := s.key(compactRevKey)
	// Record it unless someone recorded a newer one meanwhile.
	_, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(k), "<", pad(rev))).
		Then(clientv3.OpPut(k, pad(rev))).
		Else().
		Commit()
	if err != nil {
		return s.mapErr(ctx, err, rev)
	}
	if s.tr.Enabled() {
		s.tr.Printf(narrate.Store, "etcd compacted through rev %d", rev)
	}
	return nil
}

// pad writes a revision so that etcd's byte comparison of values orders
// revisions numerically (a missing key compares as the empty value).
func pad(rev int64) string { return fmt.Sprintf("%020d", rev) }

// noteCompacted raises the known compacted revision to rev.
func (s *Store) noteCompacted(rev int64) {
	for {
		cur := s.compacted.Load()
		if rev <= cur || s.compacted.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// startCompactionFollower reads compact_rev_key and then watches it, so
// CompactedRevision follows compactions made by any store on the cluster.
func (s *Store) startCompactionFollower(ctx context.Context) error {
	k := s.key(compactRevKey)
	resp, err := s.cli.Get(ctx, k)
	if err != nil {
		return fmt.Errorf("etcd store: reading %s: %w", k, err)
	}
	if len(resp.Kvs) == 1 {
		s.noteRecorded(resp.Kvs[0].Value)
	}
	wch := s.cli.Watch(s.ctx, k, clientv3.WithRev(resp.Header.Revision+1))
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for resp := range wch {
			for _, e := range resp.Events {
				if e.Type == clientv3.EventTypePut {
					s.noteRecorded(e.Kv.Value)
				}
			}
		}
	}()
	return nil
}

func (s *Store) noteRecorded(v []byte) {
	if rev, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		s.noteCompacted(rev)
	}
}
