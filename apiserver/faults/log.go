package faults

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// The switch log: the last switches thrown over HTTP, with who threw them.
// The live page reads it in the debug view and puts each switch in its
// timeline, so a fault pulled by curl in another terminal (or by another
// attendee) reads as the cause of what the page does next, exactly like
// one pulled by the page's own buttons. Kubernetes has nothing like it:
// its failures are not switched on, and its audit log records requests,
// not their meaning.

// logSize is how many switches the log keeps; the page reads it every
// second, so only a burst of more than this many in one second is missed.
const logSize = 32

// Switched is one switch thrown over HTTP.
type Switched struct {
	// Seq numbers the switches from 1, so a reader knows which it has seen.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Name is the switch, as in its path: "kill-watches".
	Name string `json:"name"`
	// Detail is its parameters and result, "killed=3" or "duration=10s".
	Detail     string `json:"detail,omitempty"`
	UserAgent  string `json:"userAgent,omitempty"`
	RemoteAddr string `json:"remoteAddr,omitempty"`
}

// switchLog keeps the last logSize switches, oldest first. Faults.mu
// guards it.
type switchLog struct {
	seq  int64
	last []Switched
}

// add appends a switch and returns its sequence number.
func (l *switchLog) add(s Switched) int64 {
	l.seq++
	s.Seq = l.seq
	l.last = append(l.last, s)
	if len(l.last) > logSize {
		l.last = append(l.last[:0], l.last[len(l.last)-logSize:]...)
	}
	return s.Seq
}

// logSwitch records that r threw the switch name with result (its answer
// but the "fault" field) and returns the switch's sequence number.
func (f *Faults) logSwitch(r *http.Request, name string, result map[string]any) int64 {
	keys := make([]string, 0, len(result))
	for k := range result {
		if k != "fault" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, result[k]))
	}
	s := Switched{Time: time.Now().UTC(), Name: name, Detail: strings.Join(parts, ", "),
		UserAgent: r.UserAgent(), RemoteAddr: r.RemoteAddr}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log.add(s)
}
