// Package serving is how the apiserver meets the network: the listener
// and its connections, TLS and HTTP/2. Plain HTTP/1.1 on loopback is the
// zero-setup default; with a certificate (or a self-signed one generated
// at start) the server speaks TLS and negotiates HTTP/2 by ALPN with
// kube-apiserver's SETTINGS (100 concurrent streams per connection), so
// kubectl and client-go talk to it as to a real cluster: every watch of a
// process one stream of one shared TCP connection.
//
// Where it sits in the data flow: underneath everything. Every accepted
// connection is a Conn with an id; the request context carries it
// (ConnContext, FromContext), so the WatchServer can say which connection
// carries each watch, and the fault switches can reset a whole connection
// (tcpkill: all its streams die) or freeze it (a half-open connection: no
// data, no answer to HTTP/2 PINGs, which is how client-go's health check
// finds it).
//
//	TCP ──► Conns.Listen (Conn, id) ──► TLS (ALPN h2 | http/1.1) ──► net/http ──► apiserver
//
// Files: conn.go (connections, their faults and their ids), tls.go (TLS and
// HTTP/2 settings), selfsigned.go (a generated certificate), kubeconfig.go
// (the kubeconfig a generated certificate comes with).
//
// What it mirrors in Kubernetes: k8s.io/apiserver/pkg/server/secure_serving.go
// (TLS, ALPN and the HTTP/2 server options), options/serving.go
// (--tls-cert-file, --tls-private-key-file, --cert-dir and the generated
// self-signed certificate) and client-go's util/cert.
package serving
