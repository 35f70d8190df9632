package leaderelection

import (
	"encoding/json"
	"fmt"
	"time"
)

// Record is what a Lease says about its holder: resourcelock's
// LeaderElectionRecord, stored as the Lease's spec.
type Record struct {
	// HolderIdentity is the leader's identity; "" when released.
	HolderIdentity string
	// LeaseDurationSeconds is how long the others wait, from the last
	// change they saw, before they may take over.
	LeaseDurationSeconds int
	AcquireTime          time.Time
	RenewTime            time.Time
	// LeaderTransitions counts the changes of holder.
	LeaderTransitions int
}

// microTime is metav1.MicroTime's wire format (metav1.RFC3339Micro): a
// Lease's times carry microseconds, unlike every other timestamp.
const microTime = "2006-01-02T15:04:05.000000Z07:00"

// leaseSpec is coordination.k8s.io/v1 LeaseSpec, the fields a
// LeaderElectionRecord maps to (resourcelock's LeaderElectionRecordToLeaseSpec).
type leaseSpec struct {
	HolderIdentity       *string `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32  `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *string `json:"acquireTime,omitempty"`
	RenewTime            *string `json:"renewTime,omitempty"`
	LeaseTransitions     *int32  `json:"leaseTransitions,omitempty"`
}

// specJSON is r as a Lease's spec. As in client-go, every field is set,
// the holder and transitions even when empty.
func (r Record) specJSON() json.RawMessage {
	holder, dur, trans := r.HolderIdentity, int32(r.LeaseDurationSeconds), int32(r.LeaderTransitions)
	acq, ren := r.AcquireTime.UTC().Format(microTime), r.RenewTime.UTC().Format(microTime)
	raw, _ := json.Marshal(leaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur,
		AcquireTime: &acq, RenewTime: &ren, LeaseTransitions: &trans}) // cannot fail: strings and ints
	return raw
}

// recordFromSpec reads a Lease's spec (absent: the zero Record).
func recordFromSpec(raw json.RawMessage) (Record, error) {
	var s leaseSpec
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil {
			return Record{}, fmt.Errorf("lease spec: %w", err)
		}
	}
	var r Record
	if s.HolderIdentity != nil {
		r.HolderIdentity = *s.HolderIdentity
	}
	if s.LeaseDurationSeconds != nil {
		r.LeaseDurationSeconds = int(*s.LeaseDurationSeconds)
	}
	if s.LeaseTransitions != nil {
		r.LeaderTransitions = int(*s.LeaseTransitions)
	}
	for _, t := range []struct {
		in  *string
		out *time.Time
	}{{s.AcquireTime, &r.AcquireTime}, {s.RenewTime, &r.RenewTime}} {
		if t.in == nil {
			continue
		}
		v, err := time.Parse(time.RFC3339Nano, *t.in)
		if err != nil {
			return Record{}, fmt.Errorf("lease spec: %w", err)
		}
		*t.out = v
	}
	return r, nil
}
