package apiserver

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"listwatch/api"
)

// Object names follow DNS rules, and the messages below are Kubernetes' own
// (k8s.io/apimachinery/pkg/util/validation), because clients and people
// read them: `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid
// value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of ...`.

const (
	dns1123LabelFmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainFmt = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1035LabelFmt     = "[a-z]([-a-z0-9]*[a-z0-9])?"
	labelKeyFmt         = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	labelValueFmt       = "(" + labelKeyFmt + ")?"

	dns1123LabelMsg     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
	dns1123SubdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	dns1035LabelMsg     = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"
	labelKeyMsg         = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueMsg       = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

	maxLabelLength     = 63
	maxSubdomainLength = 253
)

var (
	dns1123LabelRE     = regexp.MustCompile("^" + dns1123LabelFmt + "$")
	dns1123SubdomainRE = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
	dns1035LabelRE     = regexp.MustCompile("^" + dns1035LabelFmt + "$")
	labelKeyRE         = regexp.MustCompile("^" + labelKeyFmt + "$")
	labelValueRE       = regexp.MustCompile("^" + labelValueFmt + "$")
)

// regexMsg appends the examples and the regex to a rule, as Kubernetes does.
func regexMsg(msg, re string, examples ...string) string {
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString(" (e.g. ")
	for i, e := range examples {
		if i > 0 {
			b.WriteString(" or ")
		}
		fmt.Fprintf(&b, "'%s', ", e)
	}
	fmt.Fprintf(&b, "regex used for validation is '%s')", re)
	return b.String()
}

func maxLenMsg(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }

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
	name = maskTrailingDash(name, prefix)
	var errs []string
	if len(name) > maxSubdomainLength {
		errs = append(errs, maxLenMsg(maxSubdomainLength))
	}
	if !dns1123SubdomainRE.MatchString(name) {
		errs = append(errs, regexMsg(dns1123SubdomainMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// validateDNS1123Label is the rule for namespace names.
func validateDNS1123Label(name string, prefix bool) []string {
	name = maskTrailingDash(name, prefix)
	var errs []string
	if len(name) > maxLabelLength {
		errs = append(errs, maxLenMsg(maxLabelLength))
	}
	if !dns1123LabelRE.MatchString(name) {
		if dns1123SubdomainRE.MatchString(name) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, regexMsg(dns1123LabelMsg, dns1123LabelFmt, "my-name", "123-abc"))
		}
	}
	return errs
}

// validateDNS1035Label is the rule for service names.
func validateDNS1035Label(name string, prefix bool) []string {
	name = maskTrailingDash(name, prefix)
	var errs []string
	if len(name) > maxLabelLength {
		errs = append(errs, maxLenMsg(maxLabelLength))
	}
	if !dns1035LabelRE.MatchString(name) {
		errs = append(errs, regexMsg(dns1035LabelMsg, dns1035LabelFmt, "my-name", "abc-123"))
	}
	return errs
}

// validateLabelKey checks a label key: an optional DNS subdomain prefix and
// '/', then a name of at most 63 characters.
func validateLabelKey(key string) []string {
	var errs []string
	name := key
	if before, after, found := strings.Cut(key, "/"); found {
		name = after
		switch {
		case strings.Contains(after, "/"):
			return []string{"a valid label key " + regexMsg(labelKeyMsg, labelKeyFmt, "MyName", "my.name", "123-abc") +
				" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
		case before == "":
			errs = append(errs, "prefix part must be non-empty")
		default:
			for _, m := range validateDNS1123Subdomain(before, false) {
				errs = append(errs, "prefix part "+m)
			}
		}
	}
	switch {
	case name == "":
		errs = append(errs, "name part must be non-empty")
	case len(name) > maxLabelLength:
		errs = append(errs, "name part "+maxLenMsg(maxLabelLength))
	}
	if !labelKeyRE.MatchString(name) {
		errs = append(errs, "name part "+regexMsg(labelKeyMsg, labelKeyFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// validateLabelValue checks a label value: empty, or at most 63 characters
// shaped like a label key's name part.
func validateLabelValue(v string) []string {
	var errs []string
	if len(v) > maxLabelLength {
		errs = append(errs, maxLenMsg(maxLabelLength))
	}
	if !labelValueRE.MatchString(v) {
		errs = append(errs, regexMsg(labelValueMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// invalidValue is a FieldValueInvalid cause: `Invalid value: "x": why`.
func invalidValue(field, value, why string) api.StatusCause {
	return api.StatusCause{Type: api.CauseFieldValueInvalid, Field: field,
		Message: fmt.Sprintf("Invalid value: %q: %s", value, why)}
}

// validateMeta checks the metadata of an object about to be written: its
// name (or generateName) and labels, as Kubernetes' ValidateObjectMeta does.
// It returns the 422 Invalid Status, or nil.
func validateMeta(res *resource, obj *api.Object) error {
	var causes []api.StatusCause
	m := &obj.Metadata
	if m.GenerateName != "" {
		for _, msg := range res.validateName(m.GenerateName, true) {
			causes = append(causes, invalidValue("metadata.generateName", m.GenerateName, msg))
		}
	}
	if m.Name == "" {
		causes = append(causes, api.StatusCause{Type: api.CauseFieldValueRequired, Field: "metadata.name",
			Message: "Required value: name or generateName is required"})
	} else {
		for _, msg := range res.validateName(m.Name, false) {
			causes = append(causes, invalidValue("metadata.name", m.Name, msg))
		}
	}
	if res.Namespaced && m.Namespace == "" {
		causes = append(causes, api.StatusCause{Type: api.CauseFieldValueRequired, Field: "metadata.namespace",
			Message: "Required value"})
	}
	// Sorted keys make the message stable.
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		for _, msg := range validateLabelKey(k) {
			causes = append(causes, invalidValue("metadata.labels", k, msg))
		}
		for _, msg := range validateLabelValue(m.Labels[k]) {
			causes = append(causes, invalidValue("metadata.labels", m.Labels[k], msg))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Annotations)) {
		for _, msg := range validateLabelKey(k) {
			causes = append(causes, invalidValue("metadata.annotations", k, msg))
		}
	}
	if len(causes) == 0 {
		return nil
	}
	return api.NewInvalid(res.GroupKind(), m.Name, causes)
}

// generateNameAlphabet is the alphabet of generated name suffixes: no vowels
// (no accidental words) and no look-alike characters, as in Kubernetes'
// names.SimpleNameGenerator.
const generateNameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// generateNameSuffixLength is the number of random characters appended to
// metadata.generateName.
const generateNameSuffixLength = 5

// maxGeneratedNameLength keeps generated names within the name rules.
const maxGeneratedNameLength = maxLabelLength

// generateName returns prefix plus five random characters, shortening the
// prefix so the result stays a valid length.
func generateName(prefix string) string {
	if len(prefix) > maxGeneratedNameLength-generateNameSuffixLength {
		prefix = prefix[:maxGeneratedNameLength-generateNameSuffixLength]
	}
	b := make([]byte, generateNameSuffixLength)
	for i := range b {
		b[i] = generateNameAlphabet[rand.IntN(len(generateNameAlphabet))]
	}
	return prefix + string(b)
}
