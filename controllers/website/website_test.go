package website

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWant(t *testing.T) {
	two := 2
	for _, tc := range []struct {
		name         string
		spec         Spec
		wantReplicas int
		wantImage    string
	}{
		{"defaults", Spec{Message: "hi"}, 1, DefaultImage},
		{"given", Spec{Message: "hi", Replicas: &two, Image: "httpd"}, 2, "httpd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, dep, replicas := Want("site", tc.spec)
			assert.Equal(t, tc.wantReplicas, replicas)
			assert.JSONEq(t, `{"index.html":"hi"}`, string(data))
			var d struct {
				Replicas int `json:"replicas"`
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				Template struct {
					Spec struct {
						Containers []struct{ Image string } `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			}
			require.NoError(t, json.Unmarshal(dep, &d))
			assert.Equal(t, tc.wantReplicas, d.Replicas)
			assert.Equal(t, map[string]string{"website": "site"}, d.Selector.MatchLabels)
			require.Len(t, d.Template.Spec.Containers, 1)
			assert.Equal(t, tc.wantImage, d.Template.Spec.Containers[0].Image)
		})
	}
	assert.Equal(t, "site-content", ContentName("site"))
}

func TestSameJSON(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[2]}`, `{ "b":[2], "a":1 }`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `not json`, false},
	} {
		assert.Equal(t, tc.same, SameJSON(json.RawMessage(tc.a), json.RawMessage(tc.b)), "%s vs %s", tc.a, tc.b)
	}
}

func TestNewNeedsClient(t *testing.T) {
	_, err := New(Options{})
	require.Error(t, err)
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		have, want string
		covers     bool
	}{
		{`{"replicas":1,"revisionHistoryLimit":10}`, `{"replicas":1}`, true},
		{`{"replicas":2}`, `{"replicas":1}`, false},
		{`{}`, `{"replicas":1}`, false},
		{`{"a":{"b":1,"c":2}}`, `{"a":{"b":1}}`, true},
		{`{"c":[{"name":"web","image":"httpd","imagePullPolicy":"Always"}]}`, `{"c":[{"name":"web","image":"httpd"}]}`, true},
		{`{"c":[{"name":"web"},{"name":"extra"}]}`, `{"c":[{"name":"web"}]}`, false},
		{`{"c":[1]}`, `{"c":{"0":1}}`, false},
		{`not json`, `{}`, false},
	} {
		assert.Equal(t, tc.covers, Covers(json.RawMessage(tc.have), json.RawMessage(tc.want)), "%s covers %s", tc.have, tc.want)
	}
}
