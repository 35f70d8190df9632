package deployment

import (
	"encoding/json"
	"testing"
	"time"

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

func TestReadSpec(t *testing.T) {
	const tmpl = `"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	for _, tc := range []struct {
		name, spec string
		replicas   int32
		err        string
	}{
		{name: "full", spec: `{"replicas":3,"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, replicas: 3},
		{name: "replicas default to 1", spec: `{"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, replicas: 1},
		{name: "zero replicas", spec: `{"replicas":0,"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, replicas: 0},
		{name: "no spec", err: "has no spec"},
		{name: "not an object", spec: `[]`, err: "spec of deployment default/web"},
		{name: "negative", spec: `{"replicas":-1,"selector":{"matchLabels":{"app":"web"}},` + tmpl + `}`, err: "negative"},
		{name: "no selector", spec: `{` + tmpl + `}`, err: "selector"},
		{name: "selector misses template", spec: `{"selector":{"matchLabels":{"app":"db"}},` + tmpl + `}`, err: "does not match"},
		{name: "no template spec", spec: `{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}}}}`, err: "no spec.template.spec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := readSpec(deploymentWithSpec(tc.spec))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.replicas, *s.Replicas)
		})
	}
}

func TestTemplateHashChangesWithTheTemplateOnly(t *testing.T) {
	a := deploymentWithSpec(`{"replicas":1,"template":{"spec":{"image":"a"}}}`)
	b := deploymentWithSpec(`{"replicas":5,"template":{"spec":{"image":"a"}}}`)
	c := deploymentWithSpec(`{"replicas":1,"template":{"spec":{"image":"b"}}}`)
	assert.Equal(t, templateHash(a), templateHash(b), "scaling is not a new template")
	assert.NotEqual(t, templateHash(a), templateHash(c))
	assert.Len(t, templateHash(a), 8)
}

func pod(name string, ready bool, created time.Time) *api.Object {
	p := &api.Object{Metadata: api.ObjectMeta{Name: name, CreationTimestamp: created}}
	status := `{"conditions":[{"type":"Ready","status":"False"}]}`
	if ready {
		status = `{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}`
	}
	p.Fields = []api.Field{{Name: "status", Value: json.RawMessage(status)}}
	return p
}

func TestPickVictimsPrefersUnreadyThenNewest(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pods := []*api.Object{
		pod("old-ready", true, t0),
		pod("new-ready", true, t0.Add(time.Minute)),
		pod("unready", false, t0),
	}
	names := func(ps []*api.Object) (out []string) {
		for _, p := range ps {
			out = append(out, p.Metadata.Name)
		}
		return out
	}
	assert.Equal(t, []string{"unready"}, names(pickVictims(pods, 1)))
	assert.Equal(t, []string{"unready", "new-ready"}, names(pickVictims(pods, 2)))
	assert.Len(t, pickVictims(pods, 10), 3)
	assert.Equal(t, "old-ready", pods[0].Metadata.Name, "the caller's slice is not reordered")
	assert.Equal(t, 2, countReady(pods))
}
