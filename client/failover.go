package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"listwatch/narrate"
)

// failover sends each request to the current one of several API servers
// of one cluster and, when that one cannot be reached, tries the next and
// sticks with whichever answers. It is an http.RoundTripper under the
// client's http.Client, so every request (list, get, write, and a watch's
// opening GET) fails over the same way; a watch that breaks mid-stream is
// re-opened by its reflector or RetryWatcher from the last resourceVersion,
// and that GET lands on a server that answers. Several apiservers on one
// etcd share one revision history, so that resourceVersion means the same
// thing on all of them and the watch resumes without a re-list.
//
// client-go has nothing like it: a rest.Config has one Host, and real
// clusters put a load balancer (or a virtual IP, or the kubernetes Service
// inside the cluster) in front of the apiservers instead. This is the
// smallest client-side stand-in for that balancer.
type failover struct {
	next  http.RoundTripper
	hosts []*url.URL // scheme and host of each server; Config.Host first
	cur   atomic.Int64
	tr    *narrate.Tracer
}

// RoundTrip sends req to the current server, then to the others in turn
// while the error says the request never reached one (or, for a GET or
// HEAD, while there is any transport error: repeating a read is harmless).
func (f *failover) RoundTrip(req *http.Request) (*http.Response, error) {
	start := f.cur.Load()
	n := int64(len(f.hosts))
	var lastErr error
	for i := range n {
		idx := (start + i) % n
		r := req.Clone(req.Context())
		r.URL.Scheme, r.URL.Host = f.hosts[idx].Scheme, f.hosts[idx].Host
		r.Host = ""
		if i > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		resp, err := f.next.RoundTrip(r)
		if err == nil {
			if i > 0 && f.cur.CompareAndSwap(start, idx) && f.tr.Enabled() {
				f.tr.Printf(narrate.HTTP, "failover: %s did not answer, now using %s", f.hosts[start].Host, f.hosts[idx].Host)
			}
			return resp, nil
		}
		lastErr = err
		if req.Context().Err() != nil || !retriable(req, err) {
			return nil, err
		}
		if f.tr.Enabled() {
			f.tr.Printf(narrate.HTTP, "failover: %s %s on %s: %v", req.Method, req.URL.Path, f.hosts[idx].Host, err)
		}
	}
	return nil, lastErr
}

// retriable says whether another server may be tried: always when the
// connection could not even be made, and for reads on any transport error.
// A write that may have reached a server is not repeated.
func retriable(req *http.Request, err error) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return req.Method == http.MethodGet || req.Method == http.MethodHead
}

// parseHost turns a Config.Host-style address into a base URL.
func parseHost(host string, tlsSet bool) (*url.URL, error) {
	host = strings.TrimSpace(host)
	if host == "" {
		return nil, errors.New("empty host")
	}
	if !strings.Contains(host, "://") {
		scheme := "http://"
		if tlsSet {
			scheme = "https://"
		}
		host = scheme + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q: scheme must be http or https", host)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", host)
	}
	return u, nil
}
