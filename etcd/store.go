package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"listwatch/api"
	"listwatch/narrate"
	"listwatch/store"
)

// DefaultRequestTimeout bounds the calls that take no context of their own
// (Compact) and the store's own bookkeeping reads.
const DefaultRequestTimeout = 10 * time.Second

// Options configures a Store. The zero value is usable.
type Options struct {
	// Prefix is put in front of every key in etcd, like kube-apiserver's
	// --etcd-prefix. Our keys already start with /registry/, so the default
	// is none; tests use it to share one etcd between stores.
	Prefix string
	// RequestTimeout bounds Compact and the store's bookkeeping (default
	// DefaultRequestTimeout).
	RequestTimeout time.Duration
	// CompactionInterval, if positive, makes the store compact etcd every
	// interval at the revision of one interval before, like
	// kube-apiserver's --etcd-compaction-interval (5 minutes there). Zero:
	// compaction only when asked (Compact).
	CompactionInterval time.Duration
	// Tracer narrates commits and watches; nil is silent.
	Tracer *narrate.Tracer
	// Now stamps creationTimestamp; defaults to time.Now.
	Now func() time.Time
}

// Store is store.Interface on an etcd v3 cluster. It holds no data of its
// own: every read and write is a request to etcd, so any number of Stores
// (in any number of apiservers) on one cluster see one history with one
// global revision.
type Store struct {
	cli  *clientv3.Client
	opts Options
	tr   *narrate.Tracer

	// ctx ends with Close; every watch derives from it.
	ctx    context.Context
	cancel context.CancelFunc
	closed atomic.Bool
	wg     sync.WaitGroup

	// compacted is the newest compaction this store knows of, from its own
	// Compact calls and from watching compact_rev_key.
	compacted atomic.Int64
}

// The etcd store keeps the contract.
var _ store.Interface = (*Store)(nil)

// New returns a store on cli. The caller keeps ownership of cli: Close ends
// the store's watches but leaves the client open. New reads the last
// recorded compaction and keeps following it; ctx bounds that first read.
func New(ctx context.Context, cli *clientv3.Client, opts Options) (*Store, error) {
	if cli == nil {
		return nil, errors.New("etcd store: nil client")
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Store{cli: cli, opts: opts, tr: opts.Tracer}
	// WithRequireLeader: a watch on a member cut off from the leader ends
	// instead of going silent, as kube-apiserver asks for its watches.
	s.ctx, s.cancel = context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	if err := s.startCompactionFollower(ctx); err != nil {
		s.cancel()
		return nil, err
	}
	if opts.CompactionInterval > 0 {
		s.wg.Add(1)
		go s.compactPeriodically(opts.CompactionInterval)
	}
	return s, nil
}

// Close ends every watch with store.ErrClosed; later calls fail with
// store.ErrClosed. It returns once the store's goroutines have exited. The
// client stays open.
func (s *Store) Close() {
	if !s.closed.CompareAndSwap(false, true) {
		return
	}
	s.cancel()
	s.wg.Wait()
	if s.tr.Enabled() {
		s.tr.Printf(narrate.Store, "etcd store closed")
	}
}

// Client is the etcd client the store talks through.
func (s *Store) Client() *clientv3.Client { return s.cli }

// CurrentRevision asks etcd for its current revision with a linearizable
// read (the member confirms with the leader that it is up to date), so every
// write committed anywhere in the cluster before the call is at or below
// it. A count-only read of one key keeps it small.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	resp, err := s.cli.Get(ctx, s.opts.Prefix+compactRevKey, clientv3.WithCountOnly())
	if err != nil {
		return 0, s.mapErr(ctx, err, 0)
	}
	return resp.Header.Revision, nil
}

// CompactedRevision is the newest compaction this store knows of: its own,
// or another store's recorded under compact_rev_key.
func (s *Store) CompactedRevision() int64 { return s.compacted.Load() }

// check returns the context's error, or store.ErrClosed once the store is
// closed: every operation starts with it.
func (s *Store) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// key is where key lives in etcd.
func (s *Store) key(key string) string { return s.opts.Prefix + key }

// mapErr turns an etcd error into the store's: a compacted revision into
// store.CompactedError, a future one into store.FutureRevisionError, a
// request cut short by Close into store.ErrClosed; the caller's context
// error is returned as-is. rev is the revision the request asked for.
func (s *Store) mapErr(ctx context.Context, err error, rev int64) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case s.closed.Load():
		return store.ErrClosed
	case isCompacted(err):
		return &store.CompactedError{Requested: rev, Compacted: s.compacted.Load()}
	case isFutureRev(err):
		cur, cerr := s.CurrentRevision(ctx)
		if cerr != nil {
			cur = 0
		}
		return &store.FutureRevisionError{Requested: rev, Current: cur}
	}
	return fmt.Errorf("etcd: %w", err)
}

// encode is the value stored in etcd: the object's JSON without its
// resourceVersion, which etcd keeps as the key's mod_revision (as the etcd3
// store's versioner clears it before writing).
func encode(obj *api.Object) []byte {
	c := *obj
	c.Metadata.ResourceVersion = ""
	return c.AppendJSON(make([]byte, 0, 512))
}

// decode reads a value back and stamps it with its mod_revision.
func decode(key string, value []byte, modRev int64) (*api.Object, error) {
	obj := new(api.Object)
	if err := obj.UnmarshalJSON(value); err != nil {
		return nil, fmt.Errorf("etcd: value of %s at revision %d: %w", key, modRev, err)
	}
	obj.Metadata.ResourceVersion = formatRevision(modRev)
	return obj, nil
}
