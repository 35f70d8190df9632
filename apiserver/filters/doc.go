// Package filters holds what guards and records every request before and
// around its handler: the ?timeout= check (timeout.go), bearer-token
// authentication (auth.go), the request log (log.go) and the limits that
// keep one client from hurting the server: body size and the read and
// write deadlines (limits.go), requests in flight and open watches
// (inflight.go), open connections (connlimit.go, with caps derived from the
// descriptor limit in fdlimit.go), and the connection a refused watch gives
// back (refusedwatch.go, ours alone).
//
// Where it sits in the data flow: first on the way in. The server's
// outermost handler wraps the ResponseWriter in a Recorder, checks the
// ?timeout= parameter and the token, and only then routes the request;
// handlers read bodies through ReadBody.
//
//	HTTP ──► Recorder (log) ──► CheckTimeout ──► Authorized ──► route ──► handler (ReadBody)
//
// What it mirrors in Kubernetes: k8s.io/apiserver/pkg/endpoints/filters
// (request_deadline.go, authentication.go), k8s.io/apiserver/pkg/server/httplog
// (the request log) and the body limit of endpoints/handlers/rest.go
// (limitedReadBody).
package filters
