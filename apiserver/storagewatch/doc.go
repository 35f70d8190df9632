// Package storagewatch serves the watches of a resource that is not
// watch-cached: each client watch is a store watch of its own, filtered
// and encoded for that one client.
//
// # Where it sits
//
//	store ──(one Watch per client watch)──► Watcher ──► HTTP writer ══► client
//
// Every other resource is watched through its watch cache (package cacher),
// which follows the store with one watch and fans it out. kube-apiserver
// 1.37.2 does not cache Events: DefaultWatchCacheSizes
// (pkg/kubeapiserver/default_storage_factory_builder.go) gives "events"
// and "events.k8s.io/events" a watch cache size of 0, and
// StorageFactoryRestOptionsFactory.GetRESTOptions (k8s.io/apiserver
// v0.37.2 pkg/server/options/etcd.go) then builds their storage with
// generic.UndecoratedStorage instead of StorageWithCacher. A watch of them
// is a watch of etcd, through the etcd3 storage's watcher.
//
// # What it mirrors
//
// k8s.io/apiserver v0.37.2 pkg/storage/etcd3/watcher.go:
//
//   - where the watch starts (watcher.Watch, getStartWatchResourceVersion,
//     areInitialEventsRequired, isInitialEventsEndBookmarkRequired): from a
//     resourceVersion N, every change after N; from none or "0", the
//     current objects as ADDED events first (watchChan.sync), then the
//     changes after the revision they were read at; with
//     sendInitialEvents=true and bookmarks allowed, the initial-events-end
//     BOOKMARK after them;
//   - which event a change becomes for the watch's selectors
//     (watchChan.transform): ADDED when an object starts matching, DELETED
//     with its previous state when it stops;
//   - how it fails: a resourceVersion etcd has compacted is an in-stream
//     ERROR, 410 "The resourceVersion for the provided watch is too old."
//     (interpretWatchError in etcd3/errors.go), and a resourceVersion
//     ahead of the store is waited for, not refused.
//
// There are no periodic bookmarks: the registry never asks etcd for
// progress notifications (genericregistry.Store.WatchPredicate leaves
// ProgressNotify unset), so only the watch cache sends them.
//
// # Read in this order
//
// watcher.go: Start, then Next, the frames of one watch.
package storagewatch
