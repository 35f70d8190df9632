// Package etcd is listwatch's store on a real etcd v3: an implementation of
// store.Interface over go.etcd.io/etcd/client/v3, so the apiserver, its
// watch cache and everything above run unchanged on the engine Kubernetes
// uses. It lives in a nested module (listwatch/etcd) so the core module
// keeps its short dependency list.
//
// # Where it sits
//
//	etcd (embedded or a cluster) ◄─gRPC─ etcd.Store ─► apiserver/cacher ─► apiserver HTTP ─► client …
//
// It takes the place of the in-memory store.Store at the bottom of the
// server half and keeps the same contract, checked by the same conformance
// suite (listwatch/store/storetest).
//
// # What it mirrors
//
// k8s.io/apiserver/pkg/storage/etcd3:
//
//   - store.go: keys laid out as /registry/<resource>/<namespace>/<name>
//     (the apiserver passes them whole; Options.Prefix plays
//     --etcd-prefix), resourceVersion = the key's mod_revision (never stored
//     in the value), Create as a transaction "if create_revision == 0 then
//     put" (kube-apiserver 1.37 compares mod_revision with 0 instead,
//     OptimisticPut(..., 0) in storage/etcd3/store.go Create: the same test,
//     since a key that does not exist has both at 0), GuaranteedUpdate and
//     Delete as "if mod_revision == what I read then put/delete, else
//     retry", a no-op update detected by comparing the
//     encoded bytes, GetList reading one range at one revision with a limit,
//     and the continue token's two halves (revision and next key);
//   - watcher.go: one etcd watch from revision+1 with the previous key-value
//     (WithPrevKV) and progress notifications (WithProgressNotify); a PUT
//     whose create_revision is its mod_revision is ADDED, a DELETE is the
//     previous value stamped with the delete's revision;
//   - compact.go: compaction through etcd, recorded under the key
//     compact_rev_key so every apiserver on the cluster learns of it; etcd's
//     "required revision has been compacted" becomes store.CompactedError
//     and, in the apiserver, 410 Expired.
//
// Values are our JSON. Real clusters store most built-in kinds as
// Kubernetes protobuf (and can encrypt them at rest); JSON keeps what
// etcdctl shows readable.
package etcd
