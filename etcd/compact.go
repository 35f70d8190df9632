package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

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
// If the watch ends (etcd unreachable for a while, or its own start
// revision compacted), the follower reads the key again and resumes.
func (s *Store) startCompactionFollower(ctx context.Context) error {
	rev, err := s.readCompactRecord(ctx)
	if err != nil {
		return err
	}
	s.wg.Add(1)
	go s.followCompactions(rev)
	return nil
}

// readCompactRecord notes the recorded compaction and returns the revision
// it was read at.
func (s *Store) readCompactRecord(ctx context.Context) (int64, error) {
	k := s.key(compactRevKey)
	resp, err := s.cli.Get(ctx, k)
	if err != nil {
		return 0, fmt.Errorf("etcd store: reading %s: %w", k, err)
	}
	if len(resp.Kvs) == 1 {
		s.noteRecorded(resp.Kvs[0].Value)
	}
	return resp.Header.Revision, nil
}

func (s *Store) followCompactions(from int64) {
	defer s.wg.Done()
	k := s.key(compactRevKey)
	for {
		for resp := range s.cli.Watch(s.ctx, k, clientv3.WithRev(from+1)) {
			for _, e := range resp.Events {
				if e.Type == clientv3.EventTypePut {
					s.noteRecorded(e.Kv.Value)
				}
			}
		}
		if !sleepCtx(s.ctx, followRetry) {
			return
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.RequestTimeout)
		rev, err := s.readCompactRecord(ctx)
		cancel()
		if err == nil {
			from = rev
		}
	}
}

// followRetry is how long the compaction follower waits before it reads
// compact_rev_key again after its watch ended.
const followRetry = time.Second

// compactPeriodically compacts every interval at the revision the cluster
// had one interval before, as kube-apiserver's compactor does
// (--etcd-compaction-interval, 5 minutes): at least one interval of history
// is always kept. Several stores on one cluster may all do it; a compaction
// someone else already made is simply skipped.
func (s *Store) compactPeriodically(interval time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	var prev int64
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.RequestTimeout)
		cur, err := s.CurrentRevision(ctx)
		cancel()
		if err != nil {
			continue
		}
		if prev > s.compacted.Load() {
			if err := s.Compact(prev); err != nil && !errors.Is(err, store.ErrCompacted) && s.tr.Enabled() {
				s.tr.Printf(narrate.Store, "etcd periodic compaction at rev %d: %v", prev, err)
			}
		}
		prev = cur
	}
}

// sleepCtx sleeps for d unless ctx ends first; it reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Store) noteRecorded(v []byte) {
	if rev, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		s.noteCompacted(rev)
	}
}
