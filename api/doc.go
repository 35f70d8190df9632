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
//   - FieldInvalid, FieldRequired, ... build the causes of a 422 as
//     pkg/util/validation/field does; IsDNS1123Subdomain, IsQualifiedName and
//     IsValidLabelValue are pkg/util/validation's checks, same words.
//   - ErrorToStatus mirrors the apiserver's responsewriters.ErrorToAPIStatus,
//     and ParseResourceVersion its APIObjectVersioner.ParseResourceVersion.
//   - LabelSelector mirrors pkg/labels, FieldSelector mirrors pkg/fields:
//     same grammar, same canonical String, same error messages.
//   - ListOptions mirrors meta/v1 ListOptions (the list and watch query).
//
// The JSON shapes are checked byte for byte against recordings of a real
// kube-apiserver v1.37 (testdata/fixtures at the repository's root; its
// README lists the requests that produced them), because real clients branch on exact reason strings
// and messages: every recorded object, list, Status and watch event decodes
// and encodes back to the same bytes, and every recorded error is rebuilt
// by a constructor. The selector parsers were compared with Kubernetes'
// own on hand-picked and fuzzed input.
//
// Decoding never panics. Bad input gives an error wrapping ErrInvalidJSON
// (or ErrInvalidSelector, ErrInvalidResourceVersion), and what is accepted
// can always be written back as valid JSON; the fuzz targets in
// fuzz_test.go hold the package to that.
package api
