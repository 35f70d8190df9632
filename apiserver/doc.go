// Package apiserver is the toy kube-apiserver: the Kubernetes REST API over
// the store, so that curl, kubectl and client-go (and our own client) can
// list, get, create, update, patch, delete and watch objects exactly as they
// would against a real cluster.
//
// Where it sits in the data flow:
//
//	store ──► cacher (one watch cache per resource) ──► apiserver ══ HTTP ══► client ──► reflector ──► ...
//	  ▲                                                    │
//	  └────────── writes (create, update, patch, delete) ──┘
//
// Writes and consistent reads go straight to the store; lists at
// resourceVersion "0" or not-older-than N, and every watch, are served by the
// watch cache of package cacher, which turns one store watch per resource
// into any number of client watches.
//
// # A watch is just GET ?watch=true
//
// The third article (docs/articles.md cites all four) makes the point that
// matters most here: there is no separate watch protocol. A watch is the GET
// of a list with ?watch=true (or the older /api/v1/watch/... path). The server answers
// 200 with Content-Type application/json and Transfer-Encoding: chunked,
// flushes the headers at once, and then keeps the response open, writing one
// compact JSON event per line as things change:
//
//	{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{...},...}}
//	{"type":"MODIFIED","object":{...}}
//
// until the watch's timeout, when it ends the response cleanly and the
// client sees EOF (or the server shuts down). kube-apiserver's
// WatchServer.HandleHTTP does exactly that; if the request asks to upgrade
// to a websocket, the same events go out as one text message each
// (HandleWS, which does not end at shutdown). Try it:
//
//	curl -N 'http://127.0.0.1:8080/api/v1/namespaces/default/configmaps?watch=true'
//
// # A reader's map
//
// The package itself is the top of the tower: Server, Config, Start and
// Stop (server.go, config.go), the route table that maps Kubernetes' paths
// onto resources and verbs (routes.go) and the read-only debug view at
// /debug/listwatch (debug.go). Everything else is a subpackage named after
// what it does, in the order a request meets them:
//
//	filters/      authentication, the request log, body limits, requests in
//	              flight, open watches and connections
//	registry/     the resource table: kinds, scope, verbs, name rules,
//	              namespaces, Table columns; and each resource's watch cache;
//	              typed bodies (validation.go), finalizers and grace
//	              periods (finalizers.go), field selectors per kind
//	handlers/     one file per verb: get.go, list.go, create.go, update.go,
//	              patch.go, delete.go, watch.go; params.go parses list and
//	              watch queries, continue.go the continue tokens;
//	              fieldvalidation.go, finalizers.go, apply.go, scale.go
//	watchserver/  the WatchServer: one watch from cache watcher to wire
//	cacher/       the watch cache that fans one store watch out
//	negotiation/  what the client accepts, writing responses and Status
//	              errors, reading JSON and protobuf bodies
//	patch/        JSON merge, strategic merge and JSON patch; server-side
//	              apply and managedFields
//	discovery/    /version, /api, /apis and OpenAPI v3 with the real
//	              schemas of the served kinds
//	faults/       the workshop fault switches
//	crd/          CustomResourceDefinitions: each one served as a resource
//	              (customresources.go installs and removes them)
//	serving/      connections, TLS and HTTP/2 (ALPN, kube-apiserver's
//	              SETTINGS), a generated certificate and its kubeconfig
//
// To follow one watch: routes.go (the path and the verb) → handlers/watch.go
// (the query) → watchserver/watchserver.go (Serve: the deadline, a cache
// watcher, a writer, frames until the deadline, the end) → pump.go and one
// writer (chunked.go, h2.go, websocket.go or stream.go) → cacher.
//
// Plain HTTP/1.1 on loopback is the default. With Config.TLSCertFile and
// TLSKeyFile, or SelfSignedTLS, the server speaks HTTPS and HTTP/2 by ALPN,
// as kube-apiserver does: then every watch of a client-go program is one
// stream of one shared TCP connection.
//
// # What it mirrors in Kubernetes
//
// kube-apiserver 1.37: k8s.io/apiserver v0.37.2 and k8s.io/kubernetes v1.37.2.
//
//   - k8s.io/apiserver/pkg/endpoints/handlers: get.go (GET, LIST and the
//     watch request), create.go, update.go, delete.go, patch.go, watch.go
//     (WatchServer) and rest.go (name and namespace checks, body limits).
//   - k8s.io/apiserver/pkg/registry/generic/registry/store.go: what each
//     verb does to storage (optimistic concurrency, generateName, delete
//     preconditions, ReturnDeletedObject).
//   - k8s.io/apiserver/pkg/storage/cacher/delegator.go: which list reads the
//     store and which the watch cache.
//   - k8s.io/apiserver/pkg/endpoints/discovery and kube-openapi: discovery.
//   - k8s.io/apimachinery/pkg/runtime/serializer/protobuf: protobuf bodies,
//     answers and watch frames, through the schema-driven transcoder in
//     api/protobuf.
//
// The wire behaviour (status codes, reasons, messages, JSON layout) is
// that of kube-apiserver 1.37 (k8s.io/apiserver v0.37.2), checked against
// recordings of a real kube-apiserver in testdata/fixtures (its README
// says which release each comes from) and against the real 1.37.2 that
// the reference/ module builds (docs/reference.md).
//
// # Deliberate differences
//
// The documented subset, with the reasons, is in
// docs/kubectl-and-client-go.md; in short:
//
//   - Strategic merge patch is a schemaless approximation
//     (patch/merge.go), and managedFields are recorded from an object's
//     first apply, not from its creation (patch/update.go).
//   - Quantities are stored as written; websocket watches, Tables and
//     custom resources are JSON even to a client that prefers protobuf.
//   - Nothing runs Pods unless cmd/controller-manager does, and there is
//     no ClusterIP allocator.
//   - Namespaces are deleted at once, with everything in them, instead of
//     turning Terminating. dryRun is refused rather than simulated.
//   - Aggregated discovery is answered with the legacy documents (kubectl
//     falls back), and there is no /openapi/v2 (kubectl uses v3).
package apiserver
