// Package faults holds the workshop fault switches of one server: the
// failures list-watch clients meet in production, on demand. Kill every
// watch connection (tcpkill), compact history (410 Gone), stall watches
// (a half-open connection), shorten the default watch timeout or the
// bookmark interval, make a resource answer 403 or 429, delay every
// request. Each is a method of Faults and, when the server runs with
// EnableFaults, a POST under /faults/. Every switch thrown over HTTP is
// logged with who threw it (log.go): the debug view shows the log, and the
// live page puts each one in its timeline, wherever it came from.
//
// Where it sits in the data flow: across it. The watch caches read the
// bookmark interval from here and kill their watchers on request; the
// WatchServer holds the stall and kill channels of each watch; the route
// table asks Failure and RequestDelay before each request.
//
//	POST /faults/kill-watches ──► Faults ──► every cacher's watchers (and stalled connections) die
//
// What it mirrors in Kubernetes: nothing; a real cluster gets these
// failures from its network, etcd's compactor and API priority and
// fairness. The faults are what the articles' stories need to be shown.
package faults
