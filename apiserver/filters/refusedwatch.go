package filters

import "net/http"

// A watch refused for the open-watches cap gets its 429 with
// "Connection: close": the server closes the connection once the answer is
// written. kube-apiserver keeps a connection open after a 429, as HTTP/1.1
// allows; it has no cap on connections, so a refused client holding its
// connection costs it one descriptor of about a million. Here it would
// cost one of the connection cap's headroom above the watch cap: a flood
// of watches from clients that never close (15,000 of them, 128 at a
// time) used the headroom up with refused watches, and from then on every
// new connection, health probes included, got the connection cap's 503.
// Closing what it refused keeps the headroom for the requests it exists
// for. Over HTTP/2 the connection carries other streams, so it stays.

// CloseRefusedWatch marks the answer to r, a request refused with 429 for
// the cap of kind k, as the connection's last when r is an HTTP/1 watch.
// It must be called before the status is written.
func CloseRefusedWatch(w http.ResponseWriter, r *http.Request, k Kind) {
	if k == Watch && r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
}
