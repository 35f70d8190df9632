package protobuf_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api/protobuf"
)

// A CustomResourceDefinition as kube-apiserver 1.37.2 writes it in
// protobuf and in JSON: testdata/crd-widgets.pb and crd-widgets.json are
// the reference's answers to GET .../customresourcedefinitions/
// widgets.e2e.example.com with Accept application/vnd.kubernetes.protobuf
// and application/json (`refcluster start`, then curl), for a CRD whose
// schema has each of the types with their own JSON form: a default (JSON),
// items (JSONSchemaPropsOrArray), additionalProperties as a schema and as
// false (JSONSchemaPropsOrBool). The protobuf decodes to the server's own
// JSON, field for field, and encodes back to the same bytes; Kubernetes'
// e2e clients send CRDs this way.
func TestCustomResourceDefinitionIsTheServersProtobuf(t *testing.T) {
	pb, err := os.ReadFile("testdata/crd-widgets.pb")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/crd-widgets.json")
	require.NoError(t, err)

	env, js := roundTrip(t, pb)
	assert.Equal(t, "apiextensions.k8s.io/v1", env.APIVersion)
	assert.Equal(t, "CustomResourceDefinition", env.Kind)
	assert.JSONEq(t, string(want), string(js))
	assert.Equal(t, string(bytes.TrimSpace(want)), string(js), "field order and encoding as kube-apiserver writes them")

	again, err := protobuf.Default().EncodeObject(env.APIVersion, env.Kind, want)
	require.NoError(t, err)
	assert.Equal(t, pb, again, "the server's JSON encodes to the server's protobuf")
}
