package deployment

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
)

// templateHashLabel marks a Deployment's ReplicaSets, their selectors and
// their Pods with the template they were made from
// (apps/v1 DefaultDeploymentUniqueLabelKey), so that the ReplicaSets of
// two templates never select each other's Pods.
const templateHashLabel = "pod-template-hash"

// safeAlphabet is the alphabet of names Kubernetes generates
// (apimachinery util/rand's alphanums: no vowels, no 0, 1, 3).
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// templateHash is the pod-template-hash of a template, as
// controller.ComputeHash makes it: an FNV-32a hash, the collision count
// mixed in when there is one, its decimal digits spelled in safeAlphabet.
//
// ComputeHash hashes the Go struct of the template (hashutil.DeepHashObject
// prints it with spew); we hash the template's JSON with its keys sorted,
// so our hashes are stable and change with the template, but are not the
// ones kube-controller-manager would give the same template.
func templateHash(template json.RawMessage, collisionCount *int32) string {
	h := fnv.New32a()
	var v any
	if json.Unmarshal(template, &v) == nil {
		canonical, _ := json.Marshal(prune(v)) // sorted keys; cannot fail on decoded JSON
		_, _ = h.Write(canonical)
	} else {
		_, _ = h.Write(template)
	}
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		_, _ = h.Write(b)
	}
	digits := fmt.Sprint(h.Sum32())
	out := make([]byte, len(digits))
	for i, c := range []byte(digits) {
		out[i] = safeAlphabet[int(c)%len(safeAlphabet)]
	}
	return string(out)
}

// equalIgnoreHash reports whether two pod templates are the same once
// the pod-template-hash label is taken out of both
// (deploymentutil.EqualIgnoreHash): how a Deployment finds its new
// ReplicaSet, and how kubectl rollout undo and history find revisions.
func equalIgnoreHash(a, b json.RawMessage) bool {
	var ta, tb map[string]any
	if json.Unmarshal(a, &ta) != nil || json.Unmarshal(b, &tb) != nil {
		return false
	}
	return reflect.DeepEqual(prune(withoutHashLabel(ta)), prune(withoutHashLabel(tb)))
}

// prune drops nulls, empty objects and empty arrays, at any depth: the
// typed comparison Kubernetes makes (apimachinery's forked DeepEqual)
// treats an absent, nil and empty field alike, and a template that made
// a round trip through kubectl (rollout undo) comes back with
// "resources":{} and "creationTimestamp":null where the stored one had
// nothing.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if p := prune(e); !isEmpty(p) {
				out[k] = p
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			out = append(out, prune(e))
		}
		return out
	}
	return v
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// withoutHashLabel drops the hash label, and labels and metadata left
// empty by it (an absent and an empty map are the same template).
func withoutHashLabel(t map[string]any) map[string]any {
	meta, _ := t["metadata"].(map[string]any)
	if meta == nil {
		delete(t, "metadata")
		return t
	}
	if labels, _ := meta["labels"].(map[string]any); labels != nil {
		delete(labels, templateHashLabel)
		if len(labels) == 0 {
			delete(meta, "labels")
		}
	}
	if len(meta) == 0 {
		delete(t, "metadata")
	}
	return t
}

// withHashLabel returns the template with the hash label added.
func withHashLabel(template json.RawMessage, hash string) (json.RawMessage, error) {
	var t map[string]any
	if err := json.Unmarshal(template, &t); err != nil {
		return nil, err
	}
	meta, _ := t["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		t["metadata"] = meta
	}
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		meta["labels"] = labels
	}
	labels[templateHashLabel] = hash
	return json.Marshal(t)
}
