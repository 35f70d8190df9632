package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procWatch samples a process's RSS every 50 ms and reads its CPU time
// from /proc (Linux; elsewhere it reports nothing).
type procWatch struct {
	pid      int
	startCPU time.Duration
	stopc    chan struct{}
	wg       sync.WaitGroup

	mu      sync.Mutex
	peakRSS int64
}

// procStats is what a run measured of the server process.
type procStats struct {
	known   bool
	cpu     time.Duration
	peakRSS int64
	lastRSS int64
}

func newProcWatch(pid int) *procWatch {
	p := &procWatch{pid: pid, stopc: make(chan struct{})}
	if pid <= 0 {
		return p
	}
	p.startCPU, _ = cpuTime(pid)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, ok := rssBytes(p.pid); ok {
				p.mu.Lock()
				p.peakRSS = max(p.peakRSS, rss)
				p.mu.Unlock()
			}
			select {
			case <-p.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *procWatch) stop() {
	select {
	case <-p.stopc:
	default:
		close(p.stopc)
	}
	p.wg.Wait()
}

// mark starts the peak and the CPU time over: it returns the RSS now,
// which becomes the peak so far, so that a scenario's set-up (filling the
// server) does not count in what it measures. 0 when the RSS is not known.
func (p *procWatch) mark() int64 {
	if p.pid <= 0 {
		return 0
	}
	rss, ok := rssBytes(p.pid)
	if !ok {
		return 0
	}
	cpu, cpuOK := cpuTime(p.pid)
	p.mu.Lock()
	p.peakRSS = rss
	if cpuOK {
		p.startCPU = cpu
	}
	p.mu.Unlock()
	return rss
}

// snapshot is the CPU used since the start and the RSS peak so far.
func (p *procWatch) snapshot() procStats {
	if p.pid <= 0 {
		return procStats{}
	}
	cpu, ok := cpuTime(p.pid)
	rss, _ := rssBytes(p.pid)
	p.mu.Lock()
	defer p.mu.Unlock()
	return procStats{known: ok, cpu: cpu - p.startCPU, peakRSS: max(p.peakRSS, rss), lastRSS: rss}
}

// cpuTime is utime+stime from /proc/<pid>/stat, at the usual 100 ticks a
// second.
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name may hold spaces: fields start after its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// rssBytes is VmRSS from /proc/<pid>/status.
func rssBytes(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err == nil
			}
		}
	}
	return 0, false
}
