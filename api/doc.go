// Package api holds the wire types that both halves of listwatch speak: the
// server (store, apiserver) writes them and the client (client, reflector,
// fifo, informer) reads them. Nothing in here knows about HTTP or storage.
//
// Where it sits in the data flow:
//
//	store ──► apiserver ══ JSON over HTTP ══► client ──► reflector ──► fifo ──► informer
//	   └───────────── every arrow carries the types in this package ─────────────┘
//
// What it mirrors in Kubernetes:
//
//   - Object and ObjectMeta mirror k8s.io/apimachinery/pkg/apis/meta/v1/unstructured
//     (an object of any kind, fields kept as-is) with ObjectMeta typed like
//     meta/v1/types.go ObjectMeta.
//   - List mirrors the *List types (ConfigMapList, ...) and ListMeta.
//   - Event mirrors meta/v1/watch.go WatchEvent and pkg/watch.Event.
//   - Status and the New*/Is* functions mirror meta/v1 Status and
//     k8s.io/apimachinery/pkg/api/errors.
//   - LabelSelector mirrors pkg/labels, FieldSelector mirrors pkg/fields.
//   - ListOptions mirrors meta/v1 ListOptions (the list and watch query).
//
// The JSON shapes are checked byte for byte against recordings of a real
// kube-apiserver v1.32 (see ../shared/fixtures), because real clients branch
// on exact reason strings and messages.
package api
