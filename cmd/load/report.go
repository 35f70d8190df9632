package main

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// histogram counts latencies in 1 ms buckets up to a minute (and one for
// everything slower), lock-free, so 5 million deliveries cost no memory.
type histogram struct {
	buckets [60001]atomic.Int64
	n       atomic.Int64
	maxNs   atomic.Int64
}

func (h *histogram) add(d time.Duration) {
	i := min(int(d/time.Millisecond), len(h.buckets)-1)
	h.buckets[max(i, 0)].Add(1)
	h.n.Add(1)
	for {
		m := h.maxNs.Load()
		if int64(d) <= m || h.maxNs.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// quantile is the upper edge of the bucket holding quantile q.
func (h *histogram) quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	want := int64(float64(n)*q + 0.5)
	var seen int64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen >= want {
			return min(time.Duration(i+1)*time.Millisecond, time.Duration(h.maxNs.Load()))
		}
	}
	return time.Duration(h.maxNs.Load())
}

func (h *histogram) summary() string {
	if h.n.Load() == 0 {
		return "none"
	}
	return fmt.Sprintf("p50 %v, p99 %v, max %v (%d samples)",
		h.quantile(0.5).Round(time.Millisecond), h.quantile(0.99).Round(time.Millisecond), time.Duration(h.maxNs.Load()).Round(time.Millisecond), h.n.Load())
}

// report is what a scenario measured.
type report struct {
	scenario string
	lines    []string // scenario-specific results
	server   procStats
	// deliveries, when set, turn CPU into CPU per delivery.
	deliveries int64
}

func (r *report) addf(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "scenario %s\n", r.scenario)
	for _, l := range r.lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if !r.server.known {
		fmt.Fprintln(w, "  server CPU and RSS: unknown (no pid, or not Linux)")
		return
	}
	fmt.Fprintf(w, "  server CPU: %v", r.server.cpu.Round(time.Millisecond))
	if r.deliveries > 0 {
		fmt.Fprintf(w, " (%.2f µs per delivery)", float64(r.server.cpu.Microseconds())/float64(r.deliveries))
	}
	fmt.Fprintf(w, "\n  server RSS: peak %.0f MiB, at the end %.0f MiB\n",
		float64(r.server.peakRSS)/(1<<20), float64(r.server.lastRSS)/(1<<20))
}
