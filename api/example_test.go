package api_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"listwatch/api"
)

// An object from a real kube-apiserver comes back out byte for byte: the
// fields we do not model (data, managedFields) are kept as they arrived.
func Example_objectRoundTrip() {
	in := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"alpha","namespace":"fixtures",` +
		`"resourceVersion":"156","creationTimestamp":"2026-11-21T16:16:42Z","labels":{"app":"demo"},` +
		`"managedFields":[{"manager":"kubectl"}]},"data":{"k":"v4"}}`

	var cm api.Object
	if err := json.Unmarshal([]byte(in), &cm); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cm.Key(), cm.Metadata.ResourceVersion, string(cm.Get("data")))

	out, _ := json.Marshal(&cm)
	fmt.Println(string(out) == in)

	// Objects handed around are shared: copy before changing one.
	edited := cm.DeepCopy()
	edited.Metadata.Labels["app"] = "other"
	fmt.Println(cm.Metadata.Labels["app"], edited.Metadata.Labels["app"])
	// Output:
	// fixtures/alpha 156 {"k":"v4"}
	// true
	// demo other
}

func ExampleParseLabelSelector() {
	sel, err := api.ParseLabelSelector("tier in (web, api), app = demo, !canary")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel.String())
	fmt.Println(sel.Matches(map[string]string{"app": "demo", "tier": "web"}))
	fmt.Println(sel.Matches(map[string]string{"app": "demo", "tier": "web", "canary": "true"}))

	// Parse errors are Kubernetes' own words, the text of a 400.
	_, err = api.ParseLabelSelector("app===demo")
	fmt.Println(err)
	fmt.Println(errors.Is(err, api.ErrInvalidSelector))
	// Output:
	// app=demo,!canary,tier in (api,web)
	// true
	// false
	// unable to parse requirement: found '=', expected: identifier
	// true
}

func ExampleParseFieldSelector() {
	sel, err := api.ParseFieldSelector("metadata.name=gamma")
	if err != nil {
		fmt.Println(err)
		return
	}
	gamma := &api.Object{Metadata: api.ObjectMeta{Name: "gamma", Namespace: "fixtures"}}
	alpha := &api.Object{Metadata: api.ObjectMeta{Name: "alpha", Namespace: "fixtures"}}
	fmt.Println(sel.MatchesObject(gamma), sel.MatchesObject(alpha))

	// Any field parses; the apiserver then refuses the ones it cannot match.
	other, _ := api.ParseFieldSelector("status.phase=Running")
	fmt.Println(other.ValidateMetadataFields())
	// Output:
	// true false
	// "status.phase" is not a known field selector: only "metadata.name", "metadata.namespace"
}

// A Status is an error: it travels through Go code wrapped like any other,
// and the Is* helpers find it, as they do in one decoded from a response.
func ExampleIsNotFound() {
	err := fmt.Errorf("getting alpha: %w", api.NewNotFound(api.GroupResource{Resource: "configmaps"}, "alpha"))
	fmt.Println(err)
	fmt.Println(api.IsNotFound(err), api.IsConflict(err))

	body, _ := json.Marshal(api.ErrorToStatus(err))
	fmt.Println(string(body))

	var fromServer api.Status
	_ = json.Unmarshal([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
		`"message":"too old resource version: 98 (116)","reason":"Expired","code":410}`), &fromServer)
	fmt.Println(api.IsResourceExpired(&fromServer))
	// Output:
	// getting alpha: configmaps "alpha" not found
	// true false
	// {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"alpha\" not found","reason":"NotFound","details":{"name":"alpha","kind":"configmaps"},"code":404}
	// true
}
