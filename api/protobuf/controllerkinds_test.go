package protobuf_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"listwatch/internal/fixtures"
)

// kube-apiserver 1.37.2's protobuf answers for a ReplicaSet, a Lease (its
// MicroTimes keep their microseconds) and an events.k8s.io Event: protobuf
// -> JSON -> protobuf gives back the recorded bytes, and the JSON is the
// one the same server wrote for the same object (the answer to the write
// just before the GET).
func TestControllerKindsAsRecorded(t *testing.T) {
	for pb, js := range map[string]string{
		"kinds-protobuf-get-replicaset.pb": "kinds-replicaset-status-put-200.json",
		"kinds-protobuf-get-lease.pb":      "kinds-lease-create-201.json",
		"kinds-protobuf-get-eventsv1.pb":   "kinds-eventsv1-create-201.json",
	} {
		t.Run(pb, func(t *testing.T) {
			_, got := roundTrip(t, fixtures.Read(t, pb))
			want := fixtures.Read(t, js)
			assert.JSONEq(t, string(want), string(got))
			assert.Equal(t, string(want[:len(want)-1]), string(got), "field order and encoding as kube-apiserver writes them")
		})
	}
}
