// Command recorder replays a checked-in script of requests against the
// reference kube-apiserver (started by refcluster) and writes what it
// answered, byte for byte, as fixtures: one file per response body and a
// README.md entry per file saying what was asked, what came back (status,
// headers, size, for a stream every chunk or WebSocket frame with its
// time) and what it shows.
//
// Where it sits: beside the list-watch data flow, like refcluster. The
// files it writes are testdata/fixtures, the recordings every test of the
// core module trusts: `rerecord` starts the reference, records, stops it
// and replaces them, README and SHA256SUMS included. `compare` says, file
// by file, what changed between two recordings once the values that
// differ on every run (uids, times, resourceVersions) are set aside, and
// `diff` sends the same script to our apiserver and to the reference at
// once and prints every difference, each explained by a row of
// docs/kubectl-and-client-go.md or not.
//
// The client is deliberately raw: HTTP/1.1 written by hand over TLS, so
// nothing between the recorder and the server adds, removes or re-frames
// anything; WebSocket (RFC 6455) and HTTP/2 frames are written and read
// the same way. Every request carries User-Agent "fixture-recorder" (a
// curl User-Agent would make kube-apiserver pretty-print its JSON) and,
// unless the script says otherwise, Accept: application/json and no
// Accept-Encoding (so no body is compressed).
//
// Read in this order: main.go, script.go, run.go, exchange.go,
// websocket.go, h2.go, record.go, keep.go, etcd.go, rerecord.go,
// compare.go, then diff.go and difference.go.
package main
