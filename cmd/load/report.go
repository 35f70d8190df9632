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
	// etcd is the etcd the server stores in, when -etcd-pid names it.
	etcd procStats
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
	r.printProc(w, "server", r.server)
	if r.etcd.known {
		r.printProc(w, "etcd", r.etcd)
	}
	if r.server.known && r.etcd.known {
		fmt.Fprintf(w, "  server + etcd CPU: %v%s\n", (r.server.cpu + r.etcd.cpu).Round(time.Millisecond), r.perDelivery(r.server.cpu+r.etcd.cpu))
	}
}

// printProc prints one process's CPU (per delivery, if known) and RSS.
func (r *report) printProc(w io.Writer, name string, p procStats) {
	if !p.known {
		fmt.Fprintf(w, "  %s CPU and RSS: unknown (no pid, or not Linux)\n", name)
		return
	}
	fmt.Fprintf(w, "  %s CPU: %v%s\n", name, p.cpu.Round(time.Millisecond), r.perDelivery(p.cpu))
	fmt.Fprintf(w, "  %s RSS: peak %.0f MiB, at the end %.0f MiB\n", name, float64(p.peakRSS)/(1<<20), float64(p.lastRSS)/(1<<20))
}

// perDelivery is " (x µs per delivery)", or "" when nothing was delivered.
func (r *report) perDelivery(cpu time.Duration) string {
	if r.deliveries <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2f µs per delivery)", float64(cpu.Microseconds())/float64(r.deliveries))
}
