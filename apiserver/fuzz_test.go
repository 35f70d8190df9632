package apiserver

import (
	"net/url"
	"testing"

	"listwatch/api"
)

// Fuzz targets for everything the REST layer parses from a client: query
// strings, object bodies, patches and continue tokens. Each must return a
// value or an error for any input, never panic or hang. The seeds are the
// interesting cases; run longer with e.g.
//
//	go test ./apiserver -run '^$' -fuzz FuzzDecodeObject -fuzztime 5m

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

func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"a":"b"}},"data":{"k":"v"}}`,
		`{}`, `[]`, `{"metadata":5}`, `{"kind":"Secret"}`, `{"metadata":{"name":"x","creationTimestamp":"2026-01-01T00:00:00Z"}}`,
		`{"metadata":{"name":"\u00ff","annotations":{"a/b/c":"d"}}}`} {
		f.Add([]byte(s))
	}
	res := builtinResources()[1] // configmaps
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, err := decodeObject(res, body)
		if err != nil {
			return
		}
		_ = validateMeta(res, obj)
		out := obj.AppendJSON(nil)
		if _, err := decodeObject(res, out); err != nil {
			t.Fatalf("our own encoding of an accepted object does not decode: %v\n%s", err, out)
		}
	})
}

func FuzzPatch(f *testing.F) {
	doc := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","labels":{"a":"b"}},"data":{"k":"v","l":[1,2]}}`)
	for _, s := range []string{`{"data":{"k":null}}`, `{"metadata":{"$patch":"delete"}}`, `[{"op":"add","path":"/data/l/-","value":3}]`,
		`[{"op":"move","from":"/data","path":"/d"}]`, `[{"op":"copy","from":"/metadata","path":"/metadata/labels/x"}]`, `{"$setElementOrder/data":[1]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, patch string) {
		for _, pt := range []string{mergePatchType, strategicPatchType, jsonPatchType} {
			apply, err := patchFunc(pt, []byte(patch))
			if err != nil {
				continue
			}
			_, _ = apply(doc)
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
