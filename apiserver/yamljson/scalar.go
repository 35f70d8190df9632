package yamljson

import (
	"errors"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// A scalar is what goyaml.v2 v2.4.4 decodes it to when the target is an
// interface{} (resolve.go, resolve; decode.go, decoder.scalar), which is
// what sigs.k8s.io/yaml's YAMLToJSON asks for. goyaml.v3, which parses
// here, reads YAML 1.2 and differs from it in two ways that matter to a
// Kubernetes object:
//
//   - YAML 1.1's other booleans. An unquoted y, yes, on, n, no or off (in
//     any of the cases goyaml.v2 lists) is a boolean to goyaml.v2 and a
//     string to goyaml.v3, so `data: {enabled: yes}` is a 400 from
//     kube-apiserver ("cannot unmarshal bool into Go struct field
//     ConfigMap.data of type string") and, as a key, `on:` is "true".
//   - Timestamps. goyaml.v3 decodes 2024-01-01 into a time.Time, which
//     would reach JSON as "2024-01-01T00:00:00Z"; goyaml.v2 keeps the text
//     as it was written (decoder.scalar: "for backward compatibility
//     reasons we set it as a string").
//
// Everything else, numbers in every base, nulls, infinities, an explicit
// tag, a quoted or block scalar, goyaml.v3 decodes as goyaml.v2 does, but
// for one tag: the non-specific "!" ("! 12") makes a scalar a string to
// goyaml.v2, and goyaml.v3's parser drops it before the node tree shows
// it, so here "! 12" is the number 12.
func scalar(n *yaml.Node) (any, error) {
	plain := n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
	if n.Tag == "!!timestamp" {
		return n.Value, nil
	}
	if b, ok := yaml11Bools[n.Value]; ok && (n.Tag == "!!bool" || plain && n.Tag == "!!str") {
		return b, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, v2Error(err)
	}
	return v, nil
}

// v2Error words a scalar that does not decode (an explicit tag its text
// cannot have, !!int x) as goyaml.v2 does: "yaml: cannot decode !!str `x`
// as a !!int", without goyaml.v3's list of lines.
func v2Error(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) != 1 {
		return err
	}
	msg := te.Errors[0]
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "line ") {
		msg = rest
	}
	return errors.New("yaml: " + msg)
}

// yaml11Bools are the plain scalars goyaml.v2 resolves to a boolean that
// YAML 1.2, and so goyaml.v3, reads as strings (goyaml.v2 resolve.go,
// resolveMapList; true and false in their three cases both agree on).
// Under an explicit !!bool too, goyaml.v2 reads them as booleans.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false,
	"off": false, "Off": false, "OFF": false,
}
