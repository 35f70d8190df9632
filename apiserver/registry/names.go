package registry

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"listwatch/api"
)

// Object names follow DNS rules, checked by the api package with
// Kubernetes' own messages (k8s.io/apimachinery/pkg/util/validation),
// because clients and people read them: `ConfigMap "Bad_Name" is invalid:
// metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain
// must consist of ...`. Each resource names its rule in resources.go.

// maskTrailingDash lets a generateName end in '-' ("demo-"), since random
// characters follow it.
func maskTrailingDash(name string, prefix bool) string {
	if prefix && len(name) > 1 && strings.HasSuffix(name, "-") {
		return name[:len(name)-1] + "a"
	}
	return name
}

// validateDNS1123Subdomain is the rule for most names (ConfigMap, Pod, ...).
func validateDNS1123Subdomain(name string, prefix bool) []string {
	return api.IsDNS1123Subdomain(maskTrailingDash(name, prefix))
}

// validateDNS1123Label is the rule for namespace names.
func validateDNS1123Label(name string, prefix bool) []string {
	return api.IsDNS1123Label(maskTrailingDash(name, prefix))
}

// validateDNS1035Label is the rule for service names.
func validateDNS1035Label(name string, prefix bool) []string {
	return api.IsDNS1035Label(maskTrailingDash(name, prefix))
}

// InvalidValue is an api.CauseFieldValueInvalid cause: `Invalid value: "x": why`.
func InvalidValue(field, value, why string) api.StatusCause {
	return api.StatusCause{Type: api.CauseFieldValueInvalid, Field: field,
		Message: fmt.Sprintf("Invalid value: %q: %s", value, why)}
}

// Validate checks an object about to be written: its metadata, as
// Kubernetes' ValidateObjectMeta does, then what res.ValidateFields checks.
// It returns the 422 Invalid Status with every problem, or nil.
func Validate(res *Resource, obj *api.Object) error {
	causes := metaCauses(res, obj)
	if res.ValidateFields != nil {
		causes = append(causes, res.ValidateFields(obj)...)
	}
	if len(causes) == 0 {
		return nil
	}
	return api.NewInvalid(res.GroupKind(), obj.Metadata.Name, causes)
}

// metaCauses checks the metadata: its name (or generateName), namespace,
// labels and annotation keys.
func metaCauses(res *Resource, obj *api.Object) []api.StatusCause {
	var causes []api.StatusCause
	m := &obj.Metadata
	if m.GenerateName != "" {
		for _, msg := range res.ValidateName(m.GenerateName, true) {
			causes = append(causes, InvalidValue("metadata.generateName", m.GenerateName, msg))
		}
	}
	if m.Name == "" {
		causes = append(causes, api.StatusCause{Type: api.CauseFieldValueRequired, Field: "metadata.name",
			Message: "Required value: name or generateName is required"})
	} else {
		for _, msg := range res.ValidateName(m.Name, false) {
			causes = append(causes, InvalidValue("metadata.name", m.Name, msg))
		}
	}
	if res.Namespaced && m.Namespace == "" {
		causes = append(causes, api.StatusCause{Type: api.CauseFieldValueRequired, Field: "metadata.namespace",
			Message: "Required value"})
	}
	// Sorted keys make the message stable.
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		for _, msg := range api.IsQualifiedName(k) {
			causes = append(causes, InvalidValue("metadata.labels", k, msg))
		}
		for _, msg := range api.IsValidLabelValue(m.Labels[k]) {
			causes = append(causes, InvalidValue("metadata.labels", m.Labels[k], msg))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Annotations)) {
		for _, msg := range api.IsQualifiedName(k) {
			causes = append(causes, InvalidValue("metadata.annotations", k, msg))
		}
	}
	return causes
}

// generateNameAlphabet is the alphabet of generated name suffixes: no vowels
// (no accidental words) and no look-alike characters, as in Kubernetes'
// names.SimpleNameGenerator.
const generateNameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// generateNameSuffixLength is the number of random characters appended to
// metadata.generateName.
const generateNameSuffixLength = 5

// maxGeneratedNameLength keeps generated names within the name rules.
const maxGeneratedNameLength = api.DNS1123LabelMaxLength

// GenerateName returns prefix plus five random characters, shortening the
// prefix so the result stays a valid length.
func GenerateName(prefix string) string {
	if len(prefix) > maxGeneratedNameLength-generateNameSuffixLength {
		prefix = prefix[:maxGeneratedNameLength-generateNameSuffixLength]
	}
	b := make([]byte, generateNameSuffixLength)
	for i := range b {
		b[i] = generateNameAlphabet[rand.IntN(len(generateNameAlphabet))]
	}
	return prefix + string(b)
}
