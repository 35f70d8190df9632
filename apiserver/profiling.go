package apiserver

import (
	"net/http"
	"net/http/pprof"
	"strings"
)

// profilingPath is where Config.Profiling serves Go's profiler, at
// kube-apiserver's path: `go tool pprof http://HOST/debug/pprof/profile`
// takes a 30-second CPU profile of the running server
// (docs/performance.md shows one of the 10,000-watcher fan-out).
const profilingPath = "/debug/pprof/"

// serveProfiling serves the profiler's pages. The handlers are called
// directly rather than through http.DefaultServeMux, which this server
// never serves.
func serveProfiling(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimPrefix(r.URL.Path, profilingPath) {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		// The index, and the named profiles (heap, goroutine, allocs, ...).
		pprof.Index(w, r)
	}
}
