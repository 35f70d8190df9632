package api

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fieldSelectorGolden was produced with k8s.io/apimachinery v0.32.13's
// fields.ParseSelector; the canonical column is its requirements written
// and sorted our way (Kubernetes' String keeps the order terms were typed
// in, sorted, before "==" became "=").
var fieldSelectorGolden = []struct{ in, canonical, err string }{
	{"metadata.name=gamma", "metadata.name=gamma", ""},
	{"metadata.name==gamma", "metadata.name=gamma", ""},
	{"metadata.name!=gamma", "metadata.name!=gamma", ""},
	{"metadata.namespace=fixtures,metadata.name=alpha", "metadata.name=alpha,metadata.namespace=fixtures", ""},
	{"", "", ""},
	{",", "", ""},
	{",,", "", ""},
	{"=", "", ""},
	{"!=", "", ""},
	{"==", "", ""},
	{"=x", "=x", ""},
	{"x=", "x=", ""},
	{"foo", "", "invalid selector: 'foo'; can't understand 'foo'"},
	{"a=b,foo", "", "invalid selector: 'a=b,foo'; can't understand 'foo'"},
	{"a=b\\,c", "a=b\\,c", ""},
	{"a=b\\=c", "a=b\\=c", ""},
	{"a=b\\\\c", "a=b\\\\c", ""},
	{"a=b\\c", "", "invalid field selector: invalid escape sequence: \\c"},
	{"a=b\\", "", "invalid field selector: invalid escape sequence: \\"},
	{"a=b=c", "", "invalid field selector: unescaped character in value: 61"},
	{"a=b,c", "", "invalid selector: 'a=b,c'; can't understand 'c'"},
	{"a\\,b=c", "a\\,b=c", ""},
	{"a!b=c", "a!b=c", ""},
	{"a!!=c", "a!!=c", ""},
	{"a==b,a=c", "a=b,a=c", ""},
	{"a=2,a==1", "a=1,a=2", ""},
	{"a!==b", "", "invalid field selector: unescaped character in value: 61"},
	{"metadata.name = x", "metadata.name = x", ""},
	{" metadata.name=x", " metadata.name=x", ""},
	{"a=b,,c=d", "a=b,c=d", ""},
	{"a=,b=", "a=,b=", ""},
	{"z=1,y=2,x=3", "x=3,y=2,z=1", ""},
	{"a=é\\,", "a=é\\,", ""},
}

func TestParseFieldSelectorMatchesKubernetes(t *testing.T) {
	for _, c := range fieldSelectorGolden {
		sel, err := ParseFieldSelector(c.in)
		if c.err != "" {
			require.Error(t, err, "%q", c.in)
			assert.Equal(t, c.err, err.Error(), "%q", c.in)
			assert.ErrorIs(t, err, ErrInvalidSelector, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		assert.Equal(t, c.canonical, sel.String(), "%q", c.in)
		again, err := ParseFieldSelector(sel.String())
		require.NoError(t, err, "canonical form of %q", c.in)
		assert.Equal(t, sel, again, "%q", c.in)
	}
}

func TestFieldSelectorMatchesObject(t *testing.T) {
	alpha := &Object{Metadata: ObjectMeta{Name: "alpha", Namespace: "fixtures"}}
	cases := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"metadata.name=alpha", true},
		{"metadata.name==alpha", true},
		{"metadata.name=beta", false},
		{"metadata.name!=beta", true},
		{"metadata.name!=alpha", false},
		{"metadata.namespace=fixtures", true},
		{"metadata.namespace=fixtures,metadata.name=alpha", true},
		{"metadata.namespace=fixtures,metadata.name=beta", false},
		{"metadata.namespace!=kube-system", true},
		// Fields we do not know are empty, as Kubernetes' Fields.Get says.
		{"spec.nodeName=", true},
		{"spec.nodeName=x", false},
		{"spec.nodeName!=x", true},
	}
	for _, c := range cases {
		sel, err := ParseFieldSelector(c.sel)
		require.NoError(t, err, c.sel)
		assert.Equal(t, c.want, sel.MatchesObject(alpha), c.sel)
	}
	sel, _ := ParseFieldSelector("metadata.name=")
	assert.True(t, sel.MatchesObject(nil), "a nil object has every field empty")

	var zero FieldSelector
	assert.True(t, zero.Empty())
	assert.True(t, zero.MatchesObject(alpha))
	assert.Equal(t, "", zero.String())
}

func TestFieldSelectorRequirementsAndValidation(t *testing.T) {
	sel, err := ParseFieldSelector(`metadata.namespace!=kube-system,metadata.name==a\,b`)
	require.NoError(t, err)
	assert.Equal(t, []FieldRequirement{
		{Field: "metadata.name", Operator: OpEquals, Value: "a,b"},
		{Field: "metadata.namespace", Operator: OpNotEquals, Value: "kube-system"},
	}, sel.Requirements())
	assert.Equal(t, `metadata.name=a\,b,metadata.namespace!=kube-system`, sel.String())
	assert.NoError(t, sel.ValidateMetadataFields())

	v, ok := sel.RequiresExactMatch(FieldMetadataName)
	assert.True(t, ok)
	assert.Equal(t, "a,b", v)
	_, ok = sel.RequiresExactMatch(FieldMetadataNamespace)
	assert.False(t, ok, "!= pins nothing")

	bad, err := ParseFieldSelector("status.phase=Running,metadata.name=x")
	require.NoError(t, err, "any field name parses")
	err = bad.ValidateMetadataFields()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidSelector)
	assert.Equal(t, `"status.phase" is not a known field selector: only "metadata.name", "metadata.namespace"`, err.Error())
}

func TestEscapeFieldValue(t *testing.T) {
	for raw, escaped := range map[string]string{
		"plain": "plain", "a,b": `a\,b`, "a=b": `a\=b`, `a\b`: `a\\b`, `\,=`: `\\\,\=`, "": "",
	} {
		assert.Equal(t, escaped, EscapeFieldValue(raw))
		back, err := unescapeFieldValue(escaped)
		require.NoError(t, err)
		assert.Equal(t, raw, back)
	}
}
