package registry

import (
	"encoding/json"
	"maps"
	"slices"

	"listwatch/api"
)

// The keys of a ConfigMap's data and binaryData and of a Secret's data,
// checked as kube-apiserver 1.37 checks them (k8s.io/kubernetes
// pkg/apis/core/validation/validation.go, ValidateConfigMap and
// ValidateSecret): each key must be a valid config key (api.IsConfigMapKey),
// since a volume turns it into a file name, and a ConfigMap key may not be
// in both data and binaryData. Each problem is one cause on field
// data[<key>] (binaryData[<key>]), the key quoted as its value:
//
//	data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, ...
//
// A key that was not UTF-8 arrives as U+FFFD, as the JSON decoder makes it.
// A Secret's stringData is merged into its data before validation (the v1
// conversion, Convert_v1_Secret_To_core_Secret), so its keys are reported
// as data[<key>] too.

// validateConfigMapKeys is the ConfigMap's ValidateFields.
func validateConfigMapKeys(obj *api.Object) []api.StatusCause {
	data, binary := objectKeys(obj, "data"), objectKeys(obj, "binaryData")
	var causes []api.StatusCause
	for _, k := range data {
		causes = append(causes, keyCauses("data", k)...)
		if slices.Contains(binary, k) {
			causes = append(causes, api.FieldInvalid(keyField("data", k), k, "duplicate of key present in binaryData"))
		}
	}
	for _, k := range binary {
		causes = append(causes, keyCauses("binaryData", k)...)
	}
	return causes
}

// validateSecretKeys is the Secret's ValidateFields.
func validateSecretKeys(obj *api.Object) []api.StatusCause {
	keys := append(objectKeys(obj, "data"), objectKeys(obj, "stringData")...)
	slices.Sort(keys)
	var causes []api.StatusCause
	for _, k := range slices.Compact(keys) {
		causes = append(causes, keyCauses("data", k)...)
	}
	return causes
}

// keyCauses is one cause per thing wrong with key, on field[key].
func keyCauses(field, key string) []api.StatusCause {
	var causes []api.StatusCause
	for _, msg := range api.IsConfigMapKey(key) {
		causes = append(causes, api.FieldInvalid(keyField(field, key), key, msg))
	}
	return causes
}

// keyField is a field path's map subscript, as field.Path.Key prints it.
func keyField(field, key string) string { return field + "[" + key + "]" }

// objectKeys returns the keys of the top-level object member name, sorted
// so that messages are stable (kube-apiserver reports them in map order).
// A member that is not an object has no keys: typing is Conform's.
func objectKeys(obj *api.Object, name string) []string {
	raw := obj.Get(name)
	if raw == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}
