package deployment

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func deploymentWithSpec(spec string) *api.Object {
	d := &api.Object{Metadata: api.ObjectMeta{Namespace: "default", Name: "web"}}
	if spec != "" {
		d.Fields = []api.Field{{Name: "spec", Value: json.RawMessage(spec)}}
	}
	return d
}

const tmpl = `"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`

func TestReadSpec(t *testing.T) {
	for _, tc := range []struct {
		name, spec          string
		replicas, surge, un int32
		err                 string
	}{
		{name: "defaults", spec: `{"replicas":4,"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, replicas: 4, surge: 1, un: 1},
		{name: "replicas default to 1", spec: `{"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, replicas: 1, surge: 1, un: 0},
		{name: "numbers", spec: `{"replicas":10,"strategy":{"rollingUpdate":{"maxSurge":3,"maxUnavailable":"50%"}},"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, replicas: 10, surge: 3, un: 5},
		{name: "both zero: one may be unavailable", spec: `{"replicas":3,"strategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":"10%"}},"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, replicas: 3, surge: 0, un: 1},
		{name: "recreate", spec: `{"replicas":3,"strategy":{"type":"Recreate"},"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, replicas: 3},
		{name: "no spec", err: "has no spec"},
		{name: "not an object", spec: `[]`, err: "spec of deployment default/web"},
		{name: "negative", spec: `{"replicas":-1,"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, err: "negative"},
		{name: "no selector", spec: `{` + tmpl + `}`, err: "selector"},
		{name: "selector misses template", spec: `{"selector":{"matchLabels":{"app":"db"}},` + tmpl + `}`, err: "does not match"},
		{name: "no template spec", spec: `{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}}}}`, err: "no spec.template.spec"},
		{name: "bad surge", spec: `{"strategy":{"rollingUpdate":{"maxSurge":"lots"}},"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, err: "invalid value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := readSpec(deploymentWithSpec(tc.spec))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.replicas, *s.Replicas)
			surge, un, err := s.fenceposts()
			require.NoError(t, err)
			assert.Equal(t, []int32{tc.surge, tc.un}, []int32{surge, un}, "maxSurge, maxUnavailable")
			assert.Equal(t, int32(10), *s.RevisionHistoryLimit)
		})
	}
}

func TestTemplateHashChangesWithTheTemplateOnly(t *testing.T) {
	a := json.RawMessage(`{"spec":{"image":"a"},"metadata":{"labels":{"app":"web"}}}`)
	reordered := json.RawMessage(`{"metadata":{"labels":{"app":"web"}}, "spec":{"image":"a"}}`)
	c := json.RawMessage(`{"spec":{"image":"b"},"metadata":{"labels":{"app":"web"}}}`)
	assert.Equal(t, templateHash(a, nil), templateHash(reordered, nil), "the same template, however it is written")
	assert.NotEqual(t, templateHash(a, nil), templateHash(c, nil))
	one := int32(1)
	assert.NotEqual(t, templateHash(a, nil), templateHash(a, &one), "a collision count makes another hash")
	assert.Regexp(t, `^[bcdfghjklmnpqrstvwxz2456789]+$`, templateHash(a, nil))
}

func TestEqualIgnoreHash(t *testing.T) {
	d := json.RawMessage(`{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx"}]}}`)
	withHash, err := withHashLabel(d, "abc")
	require.NoError(t, err)
	assert.Contains(t, string(withHash), `"pod-template-hash":"abc"`)
	assert.True(t, equalIgnoreHash(d, withHash), "a ReplicaSet's template is its Deployment's plus the hash label")
	assert.False(t, equalIgnoreHash(d, json.RawMessage(`{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"httpd"}]}}`)))
	roundTripped := json.RawMessage(`{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx","resources":{}}]}}`)
	assert.True(t, equalIgnoreHash(d, roundTripped), "nulls and empty objects are absent fields (kubectl rollout undo sends them)")
	assert.Equal(t, templateHash(d, nil), templateHash(roundTripped, nil))
	bare := json.RawMessage(`{"spec":{}}`)
	bareHash, err := withHashLabel(bare, "x")
	require.NoError(t, err)
	assert.True(t, equalIgnoreHash(bare, bareHash), "no labels and only the hash label are the same")
}

func TestNewReplicasRollingRespectsSurge(t *testing.T) {
	old := []*replicaSet{{replicas: 4}}
	assert.Equal(t, int32(1), newReplicasRolling(4, 1, old, 0), "4 old + 1 surge")
	assert.Equal(t, int32(1), newReplicasRolling(4, 1, old, 1), "at the surge limit: no more")
	assert.Equal(t, int32(3), newReplicasRolling(4, 1, []*replicaSet{{replicas: 2}}, 1))
	assert.Equal(t, int32(4), newReplicasRolling(4, 1, nil, 2), "never beyond replicas")
}

func TestNewReplicaSetAnnotationsKeepTheRevisionHistory(t *testing.T) {
	d := &api.Object{Metadata: api.ObjectMeta{Annotations: map[string]string{
		"kubernetes.io/change-cause": "kubectl set image", revisionAnnotation: "7",
		"kubectl.kubernetes.io/last-applied-configuration": "{}",
	}}}
	fresh := newReplicaSetAnnotations(d, nil, 1)
	assert.Equal(t, map[string]string{"kubernetes.io/change-cause": "kubectl set image", revisionAnnotation: "1"}, fresh)

	// An old ReplicaSet made new again by a rollback: revision 1 becomes 3.
	back := newReplicaSetAnnotations(d, map[string]string{revisionAnnotation: "1"}, 3)
	assert.Equal(t, "3", back[revisionAnnotation])
	assert.Equal(t, "1", back[revisionHistoryAnnotation])
	again := newReplicaSetAnnotations(d, back, 5)
	assert.Equal(t, "1,3", again[revisionHistoryAnnotation])
	same := newReplicaSetAnnotations(d, again, 5)
	assert.Equal(t, again, same, "nothing to change")
}
