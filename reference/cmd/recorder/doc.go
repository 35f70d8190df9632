// Command recorder replays a checked-in script of requests against the
// reference kube-apiserver (started by refcluster) and writes what it
// answered, byte for byte, as fixtures: one file per response body and a
// README.md entry per file saying what was asked, what came back (status,
// headers, size, for a stream every chunk with its time) and what it shows.
//
// Where it sits: beside the list-watch data flow, like refcluster. The
// files it writes have the layout of testdata/fixtures, the recordings every
// test of the core module trusts; -compare reads such a directory and says,
// file by file, what changed between the two servers once the values that
// differ on every run (uids, times, resourceVersions) are set aside.
//
// The client is deliberately raw: HTTP/1.1 written by hand over TLS, so
// nothing between the recorder and the server adds, removes or re-frames
// anything. Every request carries User-Agent "fixture-recorder" (a curl
// User-Agent would make kube-apiserver pretty-print its JSON) and, unless
// the script says otherwise, Accept: application/json and no
// Accept-Encoding (so no body is compressed).
//
// Read in this order: main.go, script.go, exchange.go, record.go,
// etcd.go, compare.go.
package main
