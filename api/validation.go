package api

import (
	"fmt"
	"strings"
)

// The checks below decide what a label key, a label value and an object
// name may look like, and say what is wrong in Kubernetes' own words
// (k8s.io/apimachinery v0.37.2: pkg/util/validation, and
// pkg/api/validate/content for label keys and values), because those
// words end up in 400 and 422 messages that people paste into search
// engines. Each returns nil when the value is fine, otherwise one message
// per problem; callers join them with "; " as Kubernetes does.
//
// They are hand-written character checks rather than regular expressions,
// but the patterns quoted in the messages are the ones Kubernetes quotes.

// Limits on lengths, as in Kubernetes.
const (
	// LabelValueMaxLength is the longest label value (and label key name part).
	LabelValueMaxLength = 63
	// DNS1123LabelMaxLength is the longest RFC 1123 label (a namespace name).
	DNS1123LabelMaxLength = 63
	// DNS1123SubdomainMaxLength is the longest RFC 1123 subdomain (most
	// object names, and the prefix of a label key).
	DNS1123SubdomainMaxLength = 253
)

const (
	qualifiedNameFmt    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

	labelValueFmt    = "(" + qualifiedNameFmt + ")?"
	labelValueErrMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

	dns1123LabelFmt    = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123LabelErrMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"

	dns1123SubdomainFmt    = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1123SubdomainErrMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
)

// IsQualifiedName checks a label key (and an annotation key): an optional
// DNS subdomain prefix and a slash, then a name of at most 63 alphanumeric
// characters, '-', '_' or '.', starting and ending alphanumeric.
// "app", "example.com/tier" and "a.b_c-d" are fine; "-x", "a/b/c" are not.
func IsQualifiedName(value string) []string {
	var errs []string
	name := value
	switch parts := strings.Split(value, "/"); len(parts) {
	case 1:
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part "+emptyError)
		} else {
			for _, msg := range IsDNS1123Subdomain(prefix) {
				errs = append(errs, "prefix part "+msg)
			}
		}
	default:
		return append(errs, "a valid label key "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if name == "" {
		errs = append(errs, "name part "+emptyError)
	} else if len(name) > LabelValueMaxLength {
		errs = append(errs, "name part "+maxLenError(LabelValueMaxLength))
	}
	if !isQualifiedNamePart(name) {
		errs = append(errs, "name part "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// IsValidLabelValue checks a label value: empty, or at most 63 alphanumeric
// characters, '-', '_' or '.', starting and ending alphanumeric.
func IsValidLabelValue(value string) []string {
	var errs []string
	if len(value) > LabelValueMaxLength {
		errs = append(errs, maxLenError(LabelValueMaxLength))
	}
	if value != "" && !isQualifiedNamePart(value) {
		errs = append(errs, regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// IsConfigMapKey checks a key of a ConfigMap's data or binaryData, or of
// a Secret's data: at most 253 alphanumeric characters, '-', '_' or '.',
// and not ".", ".." or anything starting with "..", since each key may
// become a file name in a volume.
func IsConfigMapKey(value string) []string {
	var errs []string
	if len(value) > DNS1123SubdomainMaxLength {
		errs = append(errs, maxLenError(DNS1123SubdomainMaxLength))
	}
	if !isConfigMapKey(value) {
		errs = append(errs, regexError(configMapKeyErrMsg, configMapKeyFmt, "key.name", "KEY_NAME", "key-name"))
	}
	switch {
	case value == ".":
		errs = append(errs, "must not be '.'")
	case value == "..":
		errs = append(errs, "must not be '..'")
	case strings.HasPrefix(value, ".."):
		errs = append(errs, "must not start with '..'")
	}
	return errs
}

const (
	configMapKeyFmt    = "[-._a-zA-Z0-9]+"
	configMapKeyErrMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
)

// isConfigMapKey matches ^[-._a-zA-Z0-9]+$.
func isConfigMapKey(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// IsDNS1123Subdomain checks the name of most objects (a ConfigMap's, for
// one): lower-case alphanumeric labels joined by dots, each label allowing
// inner '-', at most 253 characters in all. Its message is the one in a 422
// for a bad metadata.name.
func IsDNS1123Subdomain(value string) []string {
	var errs []string
	if len(value) > DNS1123SubdomainMaxLength {
		errs = append(errs, maxLenError(DNS1123SubdomainMaxLength))
	}
	if !isDNS1123Subdomain(value) {
		errs = append(errs, regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// IsDNS1123Label checks a namespace name: one lower-case alphanumeric label
// allowing inner '-', at most 63 characters.
func IsDNS1123Label(value string) []string {
	var errs []string
	if len(value) > DNS1123LabelMaxLength {
		errs = append(errs, maxLenError(DNS1123LabelMaxLength))
	}
	if !isDNS1123Label(value) {
		if isDNS1123Subdomain(value) {
			// A valid subdomain that is not a valid label has dots in it.
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, regexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"))
		}
	}
	return errs
}

// IsDNS1035Label checks a Service name: like a DNS-1123 label, but it must
// start with a letter, so it can be a DNS name on its own.
func IsDNS1035Label(value string) []string {
	var errs []string
	if len(value) > DNS1123LabelMaxLength {
		errs = append(errs, maxLenError(DNS1123LabelMaxLength))
	}
	if !isDNS1123Label(value) || value[0] < 'a' || value[0] > 'z' {
		errs = append(errs, regexError(dns1035LabelErrMsg, dns1035LabelFmt, "my-name", "abc-123"))
	}
	return errs
}

const (
	dns1035LabelFmt    = "[a-z]([-a-z0-9]*[a-z0-9])?"
	dns1035LabelErrMsg = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"
)

const emptyError = "must be non-empty"

func maxLenError(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }

// regexError words a pattern mismatch the way Kubernetes does, examples and
// all (including the doubled space before each "or").
func regexError(msg, pattern string, examples ...string) string {
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString(" (e.g. ")
	for i, ex := range examples {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("'" + ex + "', ")
	}
	b.WriteString("regex used for validation is '" + pattern + "')")
	return b.String()
}

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func isLowerAlnum(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') }

// isQualifiedNamePart matches ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$.
func isQualifiedNamePart(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isDNS1123Label matches ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$.
func isDNS1123Label(s string) bool {
	if s == "" || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// isDNS1123Subdomain matches dot-joined DNS-1123 labels.
func isDNS1123Subdomain(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if !isDNS1123Label(part) {
			return false
		}
	}
	return true
}
