package filters

import (
	"net/http"
	"strings"
	"sync/atomic"

	"listwatch/api"
)

// Request limits, counted as kube-apiserver's max-in-flight filter counts
// them (k8s.io/apiserver/pkg/server/filters/maxinflight.go): requests whose
// verb is get, list or watch are read-only, every other one is mutating;
// each kind has its own limit, and a request past it gets 429 with
// Retry-After at once, never a queue. Long-running requests (watches) are
// not in flight in that sense: they hold no slot, or a few hundred idle
// watches would starve every GET. They are capped separately, by MaxWatches.
// Health probes (/healthz, /livez, /readyz) are exempt, as kube-apiserver's
// "probes" flow schema makes them: a loaded server must still say it is
// alive.

// Defaults of the request limits.
const (
	// DefaultMaxRequestsInFlight is kube-apiserver's --max-requests-inflight.
	DefaultMaxRequestsInFlight = 400
	// DefaultMaxMutatingRequestsInFlight is kube-apiserver's
	// --max-mutating-requests-inflight.
	DefaultMaxMutatingRequestsInFlight = 200
	// RetryAfterSeconds is the Retry-After of a 429, as in kube-apiserver.
	RetryAfterSeconds = 1
)

// InFlight counts the requests being served against their limits. The
// zero value limits nothing; use NewInFlight.
type InFlight struct {
	readOnly, mutating chan struct{}
	maxWatches         int64
	watches            atomic.Int64
	rejected           atomic.Int64
}

// NewInFlight returns limits of maxReadOnly read-only requests,
// maxMutating mutating ones and maxWatches open watches; 0 (or less)
// leaves that kind unlimited.
func NewInFlight(maxReadOnly, maxMutating, maxWatches int) *InFlight {
	f := &InFlight{maxWatches: int64(maxWatches)}
	if maxReadOnly > 0 {
		f.readOnly = make(chan struct{}, maxReadOnly)
	}
	if maxMutating > 0 {
		f.mutating = make(chan struct{}, maxMutating)
	}
	return f
}

// Kind is how a request counts.
type Kind int

// The kinds of request.
const (
	Exempt   Kind = iota // health probes: never limited
	ReadOnly             // GET and HEAD that are not watches
	Mutating             // POST, PUT, PATCH, DELETE
	Watch                // long-running: capped by MaxWatches only
)

// Classify says how r counts. A watch is ?watch=<anything but 0/false> or
// a path under /watch/ (the legacy watch paths); a LIST or GET is read-only.
func Classify(r *http.Request) Kind {
	p := r.URL.Path
	switch {
	case p == "/healthz" || p == "/livez" || p == "/readyz":
		return Exempt
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		return Mutating
	case isWatch(r):
		return Watch
	}
	return ReadOnly
}

func isWatch(r *http.Request) bool {
	if strings.Contains(r.URL.Path, "/watch/") {
		return true
	}
	vs, ok := r.URL.Query()["watch"]
	if !ok || len(vs) == 0 {
		return false
	}
	return !(vs[0] == "0" || strings.EqualFold(vs[0], "false"))
}

// Begin takes a slot of r's kind. If there is none it returns ok false and
// the caller answers with TooManyRequests; otherwise it must call release
// exactly once when the request (for a watch: the whole watch) is over.
func (f *InFlight) Begin(k Kind) (release func(), ok bool) {
	switch k {
	case ReadOnly:
		return f.take(f.readOnly)
	case Mutating:
		return f.take(f.mutating)
	case Watch:
		if f.maxWatches <= 0 {
			f.watches.Add(1)
			return f.endWatch, true
		}
		if f.watches.Add(1) > f.maxWatches {
			f.watches.Add(-1)
			f.rejected.Add(1)
			return nil, false
		}
		return f.endWatch, true
	}
	return func() {}, true
}

func (f *InFlight) endWatch() { f.watches.Add(-1) }

func (f *InFlight) take(c chan struct{}) (func(), bool) {
	if c == nil {
		return func() {}, true
	}
	select {
	case c <- struct{}{}:
		return func() { <-c }, true
	default:
		f.rejected.Add(1)
		return nil, false
	}
}

// InFlightStats is a snapshot for the debug view.
type InFlightStats struct {
	ReadOnly    int   `json:"readOnly"`
	MaxReadOnly int   `json:"maxReadOnly"`
	Mutating    int   `json:"mutating"`
	MaxMutating int   `json:"maxMutating"`
	Watches     int64 `json:"watches"`
	MaxWatches  int64 `json:"maxWatches"`
	Rejected    int64 `json:"rejected429"`
}

// Stats reports what is in flight now and how many requests got 429.
func (f *InFlight) Stats() InFlightStats {
	return InFlightStats{ReadOnly: len(f.readOnly), MaxReadOnly: cap(f.readOnly),
		Mutating: len(f.mutating), MaxMutating: cap(f.mutating),
		Watches: f.watches.Load(), MaxWatches: f.maxWatches, Rejected: f.rejected.Load()}
}

// TooManyRequests is the 429 of a request past its limit: a Status with
// reason TooManyRequests and details.retryAfterSeconds, which
// negotiation.WriteStatus also sends as the Retry-After header client-go's
// backoff reads. (kube-apiserver's max-in-flight filter answers with the
// same code and header and a plain-text body.)
func TooManyRequests(k Kind) *api.Status {
	what := "requests"
	switch k {
	case Mutating:
		what = "mutating requests"
	case Watch:
		what = "open watches"
	}
	return api.NewTooManyRequests("Too many "+what+", please try again later.", RetryAfterSeconds)
}
