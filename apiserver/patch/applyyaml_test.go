package patch

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// Repeated keys are listed as goyaml.v2's strict decoder lists them, by
// the line of the repeated value; the last value wins. The JSON body is
// crdApplyInvalidBody of k8s.io/kubernetes v1.37.2
// test/integration/apiserver/field_validation_test.go, whose expected
// errors are lines 10 and 16.
func TestParseAppliedRepeatedKeys(t *testing.T) {
	body := `
{
	"apiVersion": "%s",
	"kind": "%s",
	"metadata": {
		"name": "%s"
	},
	"spec": {
		"knownField1": "val1",
		"knownField1": "val2",
		"ports": [{
			"name": "portName",
			"containerPort": 8080,
			"protocol": "TCP",
			"hostPort": 8081,
			"hostPort": 8082
		}]
	}
}`
	js, dups, err := ParseApplied([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, []string{`line 10: key "knownField1" already set in map`, `line 16: key "hostPort" already set in map`}, dups)
	assert.JSONEq(t, `{"apiVersion":"%s","kind":"%s","metadata":{"name":"%s"},"spec":{"knownField1":"val2",
		"ports":[{"name":"portName","containerPort":8080,"protocol":"TCP","hostPort":8082}]}}`, string(js))
	assert.Equal(t, "error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n"+
		"  line 10: key \"knownField1\" already set in map\n  line 16: key \"hostPort\" already set in map", StrictApplyError(dups).Error())

	// A repeat inside a repeated value comes first; keys keep their YAML
	// type (1 and "1" differ), and a third time is a second repeat.
	_, dups, err = ParseApplied([]byte("a:\n  x: 1\nb: 1\na:\n  y: 1\n  y: 2\n1: a\n\"1\": b\nb: 2\nb: 3\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{`line 6: key "y" already set in map`, `line 5: key "a" already set in map`,
		`line 9: key "b" already set in map`, `line 10: key "b" already set in map`}, dups)
}

// Merge keys merge; aliases expand, but not without bound.
func TestParseAppliedAliases(t *testing.T) {
	js, dups, err := ParseApplied([]byte("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\nl: &l [1, 2]\nk: *l\n"))
	require.NoError(t, err)
	assert.Empty(t, dups)
	assert.JSONEq(t, `{"base":{"x":1,"y":2},"m":{"x":1,"y":3},"l":[1,2],"k":[1,2]}`, string(js))

	var bomb strings.Builder
	bomb.WriteString("a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 'b'; i <= 'k'; i++ {
		prev := string(i - 1)
		bomb.WriteString(string(i) + ": &" + string(i) + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
			", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n")
	}
	_, _, err = ParseApplied([]byte(bomb.String()))
	require.Error(t, err)
	assert.True(t, api.IsBadRequest(err))
	assert.Contains(t, err.Error(), "excessive aliasing")
}

// What is not an object is refused as applyPatcher refuses it.
func TestParseAppliedWording(t *testing.T) {
	for body, msg := range map[string]string{
		"- a\n- b\n":    "error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}",
		"3":             "error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number into Go value of type map[string]interface {}",
		"{a: [unclosed": "error decoding patch: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'",
		"? [1]\n: 2\n":  "error decoding patch: error converting YAML to JSON: unsupported map key of type: []interface {}, key: []interface {}{1}",
	} {
		_, _, err := ParseApplied([]byte(body))
		require.Error(t, err, body)
		assert.True(t, api.IsBadRequest(err), "%s: %v", body, err)
		assert.Equal(t, msg, err.Error(), body)
	}
}
