package protobuf_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api/protobuf"
)

func TestConformRejectsWhatGoStructsCannotHold(t *testing.T) {
	s := protobuf.Default()
	for _, tc := range []struct {
		kind [2]string
		body string
		want string
	}{
		{[2]string{"v1", "ConfigMap"}, `{"data":{"k":1}}`, "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"},
		{[2]string{"v1", "ConfigMap"}, `{"data":[1,2]}`, "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"},
		{[2]string{"v1", "ConfigMap"}, `{"binaryData":{"k":"not base64!"}}`, "illegal base64 data at input byte 3"},
		{[2]string{"v1", "ConfigMap"}, `{"metadata":{"finalizers":[1]}}`, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type string"},
		{[2]string{"v1", "ConfigMap"}, `{"immutable":"yes"}`, "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"},
		{[2]string{"v1", "ConfigMap"}, `{"metadata":"x"}`, "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta"},
		{[2]string{"v1", "ConfigMap"}, `{"kind":7}`, "json: cannot unmarshal number into Go struct field ConfigMap.kind of type string"},
		{[2]string{"v1", "Pod"}, `{"spec":{"containers":[{"name":"c","ports":[{"containerPort":99999999999}]}]}}`,
			"json: cannot unmarshal number 99999999999 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32"},
		{[2]string{"v1", "Pod"}, `{"spec":{"containers":{}}}`, "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"},
		{[2]string{"apps/v1", "Deployment"}, `{"spec":{"replicas":1.5}}`, "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"},
		{[2]string{"v1", "ConfigMap"}, `{"metadata":{"creationTimestamp":"yesterday"}}`, `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
	} {
		t.Run(tc.body, func(t *testing.T) {
			_, err := s.Conform(tc.kind[0], tc.kind[1], []byte(tc.body))
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

func TestConformDropsUnknownFieldsInOrder(t *testing.T) {
	s := protobuf.Default()
	got, err := s.Conform("v1", "Pod", []byte(`{"kind":"Pod","apiVersion":"v1","foo":"bar","metadata":{"name":"p","x":1},`+
		`"spec":{"containers":[{"name":"c","extra":{"a":1e999999}}]},"status":{},"foo":2}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]},"status":{}}`, string(got.JSON))
	assert.Equal(t, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]},"status":{}}`, string(got.JSON), "order kept")
	assert.Equal(t, []string{`unknown field "foo"`, `unknown field "metadata.x"`, `unknown field "spec.containers[0].extra"`, `unknown field "foo"`}, got.Strict)
}

func TestConformDuplicateFieldLastWins(t *testing.T) {
	got, err := protobuf.Default().Conform("v1", "ConfigMap", []byte(`{"data":{"a":"1"},"immutable":true,"data":{"b":"2"}}`))
	require.NoError(t, err)
	assert.Equal(t, `{"immutable":true,"data":{"b":"2"}}`, string(got.JSON))
	assert.Equal(t, []string{`duplicate field "data"`}, got.Strict)
}

func TestConformReplacesInvalidUTF8(t *testing.T) {
	got, err := protobuf.Default().Conform("v1", "ConfigMap", []byte("{\"data\":{\"k\":\"a\xffb\"}}"))
	require.NoError(t, err)
	assert.Equal(t, "{\"data\":{\"k\":\"a\uFFFDb\"}}", string(got.JSON))
	assert.Empty(t, got.Strict)
}

func TestConformKeepsKubernetesTypes(t *testing.T) {
	body := `{"metadata":{"name":"d","creationTimestamp":null,"deletionTimestamp":"2026-11-23T22:25:22Z"},` +
		`"spec":{"replicas":3,"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}},` +
		`"template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"100m","memory":1024}}}]}}}}`
	got, err := protobuf.Default().Conform("apps/v1", "Deployment", []byte(body))
	require.NoError(t, err)
	// A null creationTimestamp is left out, at the top and in the
	// template's ObjectMeta alike (omitzero, apimachinery v0.37.2).
	assert.Equal(t, strings.Replace(body, `"creationTimestamp":null,`, "", 1), string(got.JSON))
	body = `{"spec":{"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}}}}}`
	got, err = protobuf.Default().Conform("apps/v1", "Deployment", []byte(body))
	require.NoError(t, err)
	assert.Equal(t, `{"spec":{"template":{"metadata":{"labels":{"app":"web"}}}}}`, string(got.JSON))
	_, err = protobuf.Default().Conform("v1", "NoSuchKind", []byte(`{}`))
	require.ErrorIs(t, err, protobuf.ErrUnknownKind)
}
