package patch

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A set's paths and its FieldsV1 text: "." marks a node with children that
// is in the set itself, and goes first, then members, then keyed elements.
func TestFieldSetMembersAndFieldsV1(t *testing.T) {
	fs := fieldSet{}
	elem := path{"f:spec", "f:containers", `k:{"name":"c"}`}
	fs.insert(elem.with("f:image"))
	fs.insert(elem)
	fs.insert(elem.with("f:name"))
	assert.Equal(t, `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}}`, string(fs.fieldsV1()))
	assert.True(t, fs.has(elem))
	assert.False(t, fs.has(path{"f:spec"}), "only what is inside spec")
	assert.True(t, fs.hasWithin(path{"f:spec"}))
	assert.Len(t, fs.paths(), 3)

	fs.remove(elem.with("f:image"))
	fs.remove(elem.with("f:name"))
	assert.Equal(t, `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{}}}}`, string(fs.fieldsV1()), "the element alone is a plain member")
	fs.remove(elem)
	assert.Empty(t, fs, "parents that were no members go with their last child")

	back := fromFieldsV1(json.RawMessage(`{"f:a":{".":{},"f:b":{}},"f:c":{}}`))
	assert.Equal(t, []path{{"f:a"}, {"f:a", "f:b"}, {"f:c"}}, back.paths())
	assert.Equal(t, `.spec.containers[name="c"].image`, elem.with("f:image").String())
	assert.Equal(t, `.metadata.finalizers[="x"]`, path{"f:metadata", "f:finalizers", `v:"x"`}.String())
}

// podSchema is the part of the real Pod schema apply reads.
func podSchema(t *testing.T) *Schema {
	t.Helper()
	s, err := NewSchema(map[string]json.RawMessage{
		"Pod":     json.RawMessage(`{"properties":{"metadata":{"$ref":"#/components/schemas/ObjectMeta"},"spec":{"allOf":[{"$ref":"#/components/schemas/PodSpec"}]}}}`),
		"PodSpec": json.RawMessage(`{"properties":{"containers":{"type":"array","items":{"$ref":"#/components/schemas/Container"},"x-kubernetes-list-map-keys":["name"],"x-kubernetes-list-type":"map"},"args":{"type":"array"}}}`),
		"Container": json.RawMessage(`{"properties":{"name":{"type":"string"},"image":{"type":"string"},` +
			`"ports":{"type":"array","items":{"$ref":"#/components/schemas/ContainerPort"},"x-kubernetes-patch-merge-key":"containerPort","x-kubernetes-patch-strategy":"merge"}}}`),
		"ContainerPort": json.RawMessage(`{"properties":{"containerPort":{"type":"integer"},"protocol":{"type":"string","default":"TCP"}}}`),
		"ObjectMeta":    json.RawMessage(`{"properties":{"name":{"type":"string"},"labels":{"type":"object","additionalProperties":{"type":"string"}},"finalizers":{"type":"array","x-kubernetes-list-type":"set"}}}`),
	}, json.RawMessage(`{"$ref":"#/components/schemas/Pod"}`))
	require.NoError(t, err)
	return s
}

// Two appliers own different containers of one Pod; each one's apply
// merges its container in by name and leaves the other's.
func TestApplyMergesMapListsByKey(t *testing.T) {
	s := podSchema(t)
	req := func(m string) ApplyRequest { return ApplyRequest{Manager: m, APIVersion: "v1", Schema: s} }
	pod := func(containers string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","finalizers":["f"]},"spec":{"containers":[` + containers + `]}}`)
	}
	obj, err := Apply(nil, pod(`{"name":"a","image":"1","ports":[{"containerPort":80}]}`), req("one"))
	require.NoError(t, err)
	obj, err = Apply(obj, pod(`{"name":"b","image":"2"}`), req("two"))
	require.NoError(t, err)
	var v struct {
		Spec struct {
			Containers []map[string]any `json:"containers"`
		} `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(obj, &v))
	require.Len(t, v.Spec.Containers, 2)
	assert.Equal(t, "a", v.Spec.Containers[0]["name"])
	assert.Equal(t, "b", v.Spec.Containers[1]["name"])

	_, err = Apply(obj, pod(`{"name":"a","image":"changed"}`), req("two"))
	require.Error(t, err, "container a's image is one's")
	assert.Contains(t, err.Error(), `conflict with "one": .spec.containers[name="a"].image`)

	// one gives its container up: it goes, two's stays.
	obj, err = Apply(obj, []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`), req("one"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(obj, &v))
	require.Len(t, v.Spec.Containers, 1)
	assert.Equal(t, "b", v.Spec.Containers[0]["name"])
}

// The ports of a container are keyed by containerPort (its patch merge
// key) and the claimed field names the port.
func TestOwnedFieldsOfAPod(t *testing.T) {
	cfg := map[string]any{}
	require.NoError(t, json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"},"finalizers":["x"]},`+
		`"spec":{"args":["1"],"containers":[{"name":"c","ports":[{"containerPort":80}]}]}}`), &cfg))
	got := ownedFields(cfg, podSchema(t)).fieldsV1()
	assert.JSONEq(t, `{"f:metadata":{"f:finalizers":{"v:\"x\"":{}},"f:labels":{"f:a":{}}},"f:spec":{"f:args":{},`+
		`"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80}":{".":{},"f:containerPort":{}}}}}}}`, string(got))
}

// Structured-merge-diff's list order: live's elements where they are,
// those the configuration also has in its order, new ones where it puts
// them.
func TestMergeListOrder(t *testing.T) {
	items := node{}
	for _, c := range []struct{ live, cfg, want []string }{
		{[]string{"a", "b"}, []string{"b", "c"}, []string{"a", "b", "c"}},
		{[]string{"a", "b"}, []string{"b", "a"}, []string{"b", "a"}},
		{[]string{"a", "x", "b"}, []string{"c", "b"}, []string{"a", "x", "c", "b"}},
	} {
		l, r := make([]any, len(c.live)), make([]any, len(c.cfg))
		for i, s := range c.live {
			l[i] = s
		}
		for i, s := range c.cfg {
			r[i] = s
		}
		out := mergeList(l, r, c.live, c.cfg, items)
		got := make([]string, len(out))
		for i, e := range out {
			got[i] = e.(string)
		}
		assert.Equal(t, c.want, got, "%v + %v", c.live, c.cfg)
	}
}

// An update takes what it changed from the appliers and records it under
// its own manager; fields it removed are nobody's.
func TestRecordUpdate(t *testing.T) {
	live := []byte(`{"metadata":{"name":"d","managedFields":[{"manager":"a","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:x":{},"f:y":{}}}}]},"data":{"x":"1","y":"2"}}`)
	next := []byte(`{"metadata":{"name":"d"},"data":{"x":"9","z":"3"}}`)
	mf, err := RecordUpdate(live, next, UpdateRequest{Manager: "kubectl-edit", APIVersion: "v1"})
	require.NoError(t, err)
	var entries []managedEntry
	require.NoError(t, json.Unmarshal(mf, &entries))
	require.Len(t, entries, 1, "a owned x and y: one changed, one removed")
	assert.Equal(t, "kubectl-edit", entries[0].Manager)
	assert.Equal(t, "Update", entries[0].Operation)
	assert.JSONEq(t, `{"f:data":{"f:x":{},"f:z":{}}}`, string(entries[0].FieldsV1))

	none, err := RecordUpdate([]byte(`{"data":{}}`), next, UpdateRequest{Manager: "m"})
	require.NoError(t, err)
	assert.Nil(t, none, "nothing is recorded before the first apply")
}

// A custom resource's schema leaves metadata out; its finalizers are
// still ObjectMeta's set. The e2e "should work for CRDs" sequence: an
// applier drops its finalizer, an updater sets two, the applier applies
// its one again: both stay, shared.
func TestCustomResourceFinalizersAreASet(t *testing.T) {
	s, err := NewSchema(map[string]json.RawMessage{
		objectMetaDef: json.RawMessage(`{"properties":{"finalizers":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"}}}`),
	}, json.RawMessage(`{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}`))
	require.NoError(t, err)
	req := ApplyRequest{Manager: "apply_test", APIVersion: "g/v1", Schema: s}
	with := []byte(`{"apiVersion":"g/v1","kind":"K","metadata":{"name":"m","finalizers":["test-finalizer"]},"spec":{"replicas":1}}`)
	obj, err := Apply(nil, with, req)
	require.NoError(t, err)
	obj, err = Apply(obj, []byte(`{"apiVersion":"g/v1","kind":"K","metadata":{"name":"m"},"spec":{"replicas":1}}`), req)
	require.NoError(t, err)
	next, err := applyMergePatch(obj, []byte(`{"metadata":{"finalizers":["test-finalizer","another-one"]}}`), false)
	require.NoError(t, err)
	mf, err := RecordUpdate(obj, next, UpdateRequest{Manager: "e2e.test", APIVersion: "g/v1", Schema: s})
	require.NoError(t, err)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(next, &top))
	var md map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(top["metadata"], &md))
	md["managedFields"] = mf
	top["metadata"], err = json.Marshal(md)
	require.NoError(t, err)
	next, err = json.Marshal(top)
	require.NoError(t, err)
	obj, err = Apply(next, with, req)
	require.NoError(t, err)
	var v struct {
		Metadata struct{ Finalizers []string } `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(obj, &v))
	assert.Equal(t, []string{"test-finalizer", "another-one"}, v.Metadata.Finalizers)
}
