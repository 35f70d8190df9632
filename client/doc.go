// Package client talks to a Kubernetes API server, ours or a real one
// (plain HTTP through `kubectl proxy` works unchanged): a REST client for
// one resource at a time, the StreamWatcher that turns a watch response
// into a channel of events, and the RetryWatcher that keeps a watch alive
// across the server ending it.
//
// Where it sits in the data flow:
//
//	apiserver ══ HTTP: GET ?watch=true, one JSON event after another ══► client ──► reflector ──► fifo ──► informer
//	                                                                      │
//	                     Client/ResourceClient (List, Get, Watch, ...) ───┤
//	                     StreamWatcher: body → events on ResultChan ──────┤
//	                     RetryWatcher: re-watch from the last resourceVersion
//
// What each type mirrors in client-go / apimachinery (v0.37):
//
//   - Config, Client: rest.Config and rest.RESTClient (client-go/rest).
//   - ConfigFromKubeconfig: tools/clientcmd, for one kubeconfig file.
//   - ServerPreferredResources: the discovery client's, from the
//     unaggregated documents.
//   - ResourceClient: the dynamic client's ResourceInterface
//     (client-go/dynamic); its List, Get, Create, ... are rest.Request.Do,
//     and Watch is rest.Request.Watch (client-go/rest/request.go).
//   - EachPage, ListAll: tools/pager.ListPager.
//   - StatusError and the Is* helpers: apimachinery/pkg/api/errors
//     (StatusError, IsNotFound, ...); an answer without a Status is turned
//     into one as rest.Request.newUnstructuredResponseError does.
//   - EventDecoder: the streaming JSON decoder of a watch
//     (apimachinery/pkg/runtime/serializer/streaming, with the JSON framer).
//   - StreamWatcher: watch.StreamWatcher
//     (apimachinery/pkg/watch/streamwatcher.go).
//   - IsProbableEOF: util/net.IsProbableEOF
//     (apimachinery/pkg/util/net/http.go).
//   - RetryWatcher: tools/watch.RetryWatcher
//     (client-go/tools/watch/retrywatcher.go).
//   - Watcher: watch.Interface.
//
// # Read in this order
//
//   - watchinterface.go: Watcher, what every watch hands its consumer;
//   - resource.go and request.go: ResourceClient's verbs, and how one
//     request is sent and its answer (or its Status error) read;
//   - watchrequest.go: Watch, the GET with watch=true that opens a watch;
//   - decoder.go: EventDecoder, which cuts the body into events;
//   - streamwatcher.go: StreamWatcher, which puts them on ResultChan and
//     closes it when the stream ends;
//   - retrywatcher.go: RetryWatcher, which watches again from the last
//     resourceVersion.
//
// config.go, kubeconfig.go, http2.go, websocket.go, idle.go, failover.go,
// pager.go, subresource.go, discovery.go and errors.go are the transports,
// the configuration and the rest of the REST client; none of them is
// needed to follow a watch.
//
// # Framing: how a chunked body becomes events
//
// A watch is a GET that the server answers with 200 and then never
// finishes on its own terms: the body is a concatenation of JSON objects,
// one per event,
//
//	{"type":"ADDED","object":{"kind":"ConfigMap",...,"metadata":{...,"resourceVersion":"151"}}}
//	{"type":"MODIFIED","object":{...}}
//
// sent with Transfer-Encoding: chunked and flushed as events happen. HTTP
// chunks are transport packaging, not events (the recordings in
// testdata/fixtures have several events in one chunk), so EventDecoder
// reads the body as a stream of JSON values: it decodes each event where it
// lies in its buffer with api.DecodeEvent (the hand-written scanner in
// api/jsonscan.go, which finds the event's end as it decodes it), so each
// call consumes exactly one object, however the bytes were split, and
// refuses one over 16 MiB instead of allocating without bound. Over a websocket
// each event is one text message; their payloads, back to back, are the
// same stream.
//
// # Why a watch ends, and what to do about it
//
// The server ends every watch: after ?timeoutSeconds, after 30-60 minutes
// when none was given, on restart, or when a proxy or NAT drops the
// connection. StreamWatcher then closes ResultChan without an error event.
// A consumer must check the second value of a receive and watch again from
// the last resourceVersion it saw; RetryWatcher does exactly that, and the
// Reflector (next layer) also handles the one case RetryWatcher cannot, a
// 410 Expired, by listing again. A connection that dies without a FIN or
// RST (half-open) is not noticed by TCP for a long time; set
// Config.IdleWatchTimeout to treat a watch that has been silent for longer
// than the server's bookmark period as dropped.
package client
