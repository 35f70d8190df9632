package handlers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/apiserver/negotiation"
)

// Every metadata-only watch of a version and format shares one Encoding,
// so a shared JSON frame is reduced to its metadata (and made protobuf)
// once for all of them, as kube-apiserver's cachingObject does per encoder
// identifier; the frame is what the unshared way makes.
func TestMetadataWatchesShareTheirFrames(t *testing.T) {
	h := &Handlers{metadataWatches: metadataWatchEncodings()}
	frame := []byte(`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"},"data":{"k":"v"}}}` + "\n")
	for _, v := range []string{"meta.k8s.io/v1", "meta.k8s.io/v1beta1"} {
		for _, pb := range []bool{false, true} {
			out := negotiation.Output{Metadata: negotiation.PartialObjectMetadata, MetadataVersion: v, Protobuf: pb}
			enc := h.watchEncoding(nil, out)
			require.NotNil(t, enc)
			assert.Same(t, enc, h.watchEncoding(nil, out), "%s protobuf=%v", v, pb)
			one, two := enc.NewFrame()(frame), enc.NewFrame()(frame)
			assert.Same(t, &one[0], &two[0], "made once: %s protobuf=%v", v, pb)
			want := negotiation.PartialWatchFrame(v)(frame)
			if pb {
				want = negotiation.ProtobufWatchFrame(want)
			}
			assert.Equal(t, want, one)
		}
	}
}
