package negotiation

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/apiserver/registry"
)

func TestNegotiation(t *testing.T) {
	cases := map[string]struct {
		table    string
		protobuf bool
		metadata string
		fails    bool
	}{
		"":                 {},
		"*/*":              {},
		"application/json": {},
		"application/vnd.kubernetes.protobuf,application/json":                              {protobuf: true},
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json":                     {table: "meta.k8s.io/v1"},
		"application/json;as=Table;v=v1beta1;g=meta.k8s.io":                                 {table: "meta.k8s.io/v1beta1"},
		"application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json": {metadata: "PartialObjectMetadataList"},
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json": {protobuf: true, metadata: "PartialObjectMetadata"},
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2,application/json":                                                                                 {},
		"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json":                                                                         {},
		"application/vnd.kubernetes.protobuf":                                              {protobuf: true},
		"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json": {},
		"application/json,application/vnd.kubernetes.protobuf":                             {},
		"application/yaml": {fails: true},
		"application/json;as=Table;v=v2;g=meta.k8s.io": {fails: true},
	}
	for accept, c := range cases {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", accept)
		out, err := NegotiateOutput(r)
		if c.fails {
			assert.Error(t, err, accept)
			continue
		}
		require.NoError(t, err, accept)
		assert.Equal(t, c.table, out.Table, accept)
		assert.Equal(t, c.protobuf, out.Protobuf, accept)
		assert.Equal(t, c.metadata, out.Metadata, accept)
	}
}

func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"a":"b"}},"data":{"k":"v"}}`,
		`{}`, `[]`, `{"metadata":5}`, `{"kind":"Secret"}`, `{"metadata":{"name":"x","creationTimestamp":"2026-01-01T00:00:00Z"}}`,
		`{"metadata":{"name":"\u00ff","annotations":{"a/b/c":"d"}}}`} {
		f.Add([]byte(s))
	}
	res := registry.Builtin()[1] // configmaps
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, err := DecodeObject(res, body)
		if err != nil {
			return
		}
		_ = registry.Validate(res, obj)
		out := obj.AppendJSON(nil)
		if _, err := DecodeObject(res, out); err != nil {
			t.Fatalf("our own encoding of an accepted object does not decode: %v\n%s", err, out)
		}
	})
}
