package etcd

import (
	"bytes"
	"context"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"listwatch/api"
	"listwatch/narrate"
	"listwatch/store"
)

// Create stores a new object: one transaction, "if the key's
// create_revision is 0 (it does not exist) then put". The store sets uid
// and creationTimestamp; resourceVersion is the put's revision.
func (s *Store) Create(ctx context.Context, key string, obj *api.Object) (*api.Object, error) {
	if err := store.CheckWrite(key, obj); err != nil {
		return nil, err
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	c := obj.DeepCopy()
	c.Metadata.UID = store.NewUID()
	c.Metadata.CreationTimestamp = s.opts.Now().UTC().Truncate(time.Second)
	k := s.key(key)
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, string(encode(c)))).
		Commit()
	if err != nil {
		return nil, s.mapErr(ctx, err, 0)
	}
	if !resp.Succeeded {
		return nil, alreadyExists(key)
	}
	rev := resp.Header.Revision
	c.Metadata.ResourceVersion = formatRevision(rev)
	s.narrateCommit(rev, api.Added, key)
	return c, nil
}

// Update replaces the object at key, keeping its uid and creationTimestamp,
// if pre holds; it always writes.
func (s *Store) Update(ctx context.Context, key string, obj *api.Object, pre store.Preconditions) (*api.Object, error) {
	if err := store.CheckWrite(key, obj); err != nil {
		return nil, err
	}
	return s.update(ctx, key, func(cur *api.Object, modRev int64) (*api.Object, error) {
		if err := pre.Check(key, cur, modRev); err != nil {
			return nil, err
		}
		return obj.DeepCopy(), nil
	}, false)
}

// GuaranteedUpdate is read, modify, write-if-unchanged, retried until it
// wins: the etcd3 store's GuaranteedUpdate. An update whose encoding equals
// the stored bytes writes nothing and returns the current object.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, tryUpdate func(current *api.Object) (*api.Object, error)) (*api.Object, error) {
	if key == "" {
		return nil, invalid("empty key")
	}
	if tryUpdate == nil {
		return nil, invalid("nil tryUpdate for %s", key)
	}
	return s.update(ctx, key, func(cur *api.Object, _ int64) (*api.Object, error) {
		in := cur.DeepCopy()
		out, err := tryUpdate(in)
		if err != nil {
			return nil, err
		}
		if out == nil {
			return nil, invalid("tryUpdate returned no object for %s", key)
		}
		if out != in {
			out = out.DeepCopy()
		}
		return out, nil
	}, true)
}

// update reads the key, asks next for the new state and writes it in a
// transaction guarded by the mod_revision it read; if someone wrote in
// between, it reads again and retries. next's error aborts.
func (s *Store) update(ctx context.Context, key string, next func(cur *api.Object, modRev int64) (*api.Object, error), skipNoop bool) (*api.Object, error) {
	k := s.key(key)
	for {
		if err := s.check(ctx); err != nil {
			return nil, err
		}
		cur, kv, err := s.get(ctx, key)
		if err != nil {
			return nil, err
		}
		out, err := next(cur, kv.ModRevision)
		if err != nil {
			return nil, err
		}
		out.Metadata.UID = cur.Metadata.UID
		out.Metadata.CreationTimestamp = cur.Metadata.CreationTimestamp
		data := encode(out)
		if skipNoop && bytes.Equal(data, kv.Value) {
			return cur, nil
		}
		resp, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", kv.ModRevision)).
			Then(clientv3.OpPut(k, string(data))).
			Commit()
		if err != nil {
			return nil, s.mapErr(ctx, err, 0)
		}
		if !resp.Succeeded {
			continue // someone wrote in between: read again
		}
		rev := resp.Header.Revision
		out.Metadata.ResourceVersion = formatRevision(rev)
		s.narrateCommit(rev, api.Modified, key)
		return out, nil
	}
}

// Delete removes the object at key if pre holds, in a transaction guarded by
// the mod_revision the preconditions were checked against, and returns its
// last state.
func (s *Store) Delete(ctx context.Context, key string, pre store.Preconditions) (*api.Object, error) {
	if key == "" {
		return nil, invalid("empty key")
	}
	k := s.key(key)
	for {
		if err := s.check(ctx); err != nil {
			return nil, err
		}
		cur, kv, err := s.get(ctx, key)
		if err != nil {
			return nil, err
		}
		if err := pre.Check(key, cur, kv.ModRevision); err != nil {
			return nil, err
		}
		resp, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(k)).
			Commit()
		if err != nil {
			return nil, s.mapErr(ctx, err, 0)
		}
		if !resp.Succeeded {
			continue
		}
		s.narrateCommit(resp.Header.Revision, api.Deleted, key)
		return cur, nil
	}
}

// get reads the current object at key and its key-value.
func (s *Store) get(ctx context.Context, key string) (*api.Object, *mvccpb.KeyValue, error) {
	resp, err := s.cli.Get(ctx, s.key(key))
	if err != nil {
		return nil, nil, s.mapErr(ctx, err, 0)
	}
	if len(resp.Kvs) == 0 {
		return nil, nil, notFound(key)
	}
	kv := resp.Kvs[0]
	obj, err := decode(key, kv.Value, kv.ModRevision)
	if err != nil {
		return nil, nil, err
	}
	return obj, kv, nil
}

// Get returns the current object at key (store.ErrNotFound).
func (s *Store) Get(ctx context.Context, key string) (*api.Object, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	obj, _, err := s.get(ctx, key)
	return obj, err
}

func (s *Store) narrateCommit(rev int64, typ api.EventType, key string) {
	if s.tr.Enabled() {
		s.tr.Printf(narrate.Store, "etcd rev %d %s %s", rev, typ, key)
	}
}
