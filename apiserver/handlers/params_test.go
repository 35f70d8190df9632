package handlers

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestContinueToken(t *testing.T) {
	tok, err := encodeContinue("/registry/configmaps/fixtures/beta\x00", "/registry/configmaps/fixtures", 127)
	require.NoError(t, err)
	// The exact token of list-page1-limit2.json.
	assert.Equal(t, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTI3LCJzdGFydCI6Ii9iZXRhXHUwMDAwIn0", tok)
	key, rv, err := decodeContinue(tok, "/registry/configmaps/fixtures/")
	require.NoError(t, err)
	assert.Equal(t, "/registry/configmaps/fixtures/beta\x00", key)
	assert.Equal(t, int64(127), rv)

	// The rv:-1 token of error-410-expired-continue.json, without the '/'.
	key, rv, err = decodeContinue("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiYmV0YVx1MDAwMCJ9", "/registry/configmaps/fixtures/")
	require.NoError(t, err)
	assert.Equal(t, "/registry/configmaps/fixtures/beta\x00", key)
	assert.Equal(t, int64(-1), rv)

	_, err = encodeContinue("/other/x", "/registry/configmaps", 1)
	assert.Error(t, err)
	for _, bad := range []string{"!!", "e30", "eyJ2IjoieCJ9", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJ4In0",
		"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIifQ", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIvLi4veCJ9"} {
		_, _, err := decodeContinue(bad, "/p/")
		assert.ErrorIs(t, err, errInvalidContinue, bad)
	}
}

func TestQueryParsing(t *testing.T) {
	q, _ := url.ParseQuery("a=&b=0&c=false&d=FALSE&e=yes&f=1")
	for key, want := range map[string]bool{"a": true, "b": false, "c": false, "d": false, "e": true, "f": true, "missing": false} {
		got, _ := queryBool(q, key)
		assert.Equal(t, want, got, key)
	}
	for sel, want := range map[string]string{"metadata.name=x": "x", "a=b, metadata.name==y": "y", "metadata.name!=x": "", "metadata.namespace=x": ""} {
		got, _ := exactNameTerm(sel)
		assert.Equal(t, want, got, sel)
	}
	p, err := parseListParams(url.Values{}, true, "n")
	require.NoError(t, err)
	assert.Equal(t, "metadata.name=n", p.field.String())
}

func FuzzListParams(f *testing.F) {
	for _, s := range []string{"", "watch=1&resourceVersion=5&timeoutSeconds=3", "limit=-1&continue=abc",
		"resourceVersionMatch=Exact&resourceVersion=0", "sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
		"labelSelector=a%3D%3Db&fieldSelector=metadata.name%21%3Dx", "labelSelector=a+in+(b,c),!d", "fieldSelector=metadata.name==x,metadata.namespace=y"} {
		f.Add(s, "")
	}
	f.Add("fieldSelector=metadata.name%3Dy", "x")
	f.Fuzz(func(t *testing.T, query, name string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		for _, watch := range []bool{false, true} {
			p, err := parseListParams(q, watch, name)
			if err != nil {
				if _, ok := api.StatusOf(err); !ok {
					t.Fatalf("error without a Status: %v", err)
				}
				continue
			}
			if p.resourceVersion != "" {
				_, _ = parseResourceVersion(p.resourceVersion)
			}
			match := p.matcher("ns")
			match(&api.Object{Metadata: api.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"a": "b"}}})
		}
	})
}

func FuzzContinueToken(f *testing.F) {
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTI3LCJzdGFydCI6Ii9iZXRhXHUwMDAwIn0")
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiYmV0YVx1MDAwMCJ9")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		key, _, err := decodeContinue(token, "/registry/configmaps/ns/")
		if err == nil && len(key) < len("/registry/configmaps/ns/") {
			t.Fatalf("a token escaped its collection: %q", key)
		}
	})
}
