package api

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// labelSelectorGolden was produced by running each input through
// k8s.io/apimachinery v0.32.13's labels.Parse (the version of the recorded
// server) and printing String() or the error. Our parser must agree on
// every one, to the letter.
var labelSelectorGolden = []struct{ in, canonical, err string }{
	{"app===demo", "", "unable to parse requirement: found '=', expected: identifier"},
	{"app=demo", "app=demo", ""},
	{"", "", ""},
	{",", "", "found ',', expected: !, identifier, or 'end of string'"},
	{"a,", "", "found '', expected: identifier after ','"},
	{"a,,b", "", "found ',', expected: identifier after ','"},
	{"!", "", "unable to parse requirement: found '', expected: identifier"},
	{"!a", "!a", ""},
	{"!a=b", "", "found '=', expected: ',' or 'end of string'"},
	{"!a in (x)", "", "found 'in', expected: ',' or 'end of string'"},
	{"a!b", "", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"},
	{"a=b,c!=d", "a=b,c!=d", ""},
	{"a==b", "a==b", ""},
	{"a!=b", "a!=b", ""},
	{"a in (x,y)", "a in (x,y)", ""},
	{"a notin (x,y)", "a notin (x,y)", ""},
	{"a in ()", "a in ()", ""},
	{"a in (,)", "a in ()", ""},
	{"a in (,a)", "a in (,a)", ""},
	{"a in (a,)", "a in (,a)", ""},
	{"a in (a,,b)", "a in (,a,b)", ""},
	{"a in (a,,)", "", "unable to parse requirement: found ')', expected: ',', or identifier"},
	{"a in (,,)", "", "unable to parse requirement: found ')', expected: ',', or identifier"},
	{"a in (a b)", "", "unable to parse requirement: found 'b', expected: ',' or ')'"},
	{"a in a", "", "unable to parse requirement: found 'a' expected: '('"},
	{"a in (a", "", "unable to parse requirement: found '', expected: ',' or ')'"},
	{"a in", "", "unable to parse requirement: found '' expected: '('"},
	{"a notin", "", "unable to parse requirement: found '' expected: '('"},
	{"a in (in)", "a in (in)", ""},
	{"notin=in", "notin=in", ""},
	{"in=notin", "in=notin", ""},
	{"in in (in)", "in in (in)", ""},
	{"a>1", "a>1", ""},
	{"a<1", "a<1", ""},
	{"a>x", "", "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"},
	{"a>-1", "", "unable to parse requirement: values[0][a]: Invalid value: \"-1\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
	{"a<-1", "", "unable to parse requirement: values[0][a]: Invalid value: \"-1\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
	{"a> 5", "a>5", ""},
	{"a>1,b<2", "a>1,b<2", ""},
	{"a=-bad", "", "unable to parse requirement: values[0][a]: Invalid value: \"-bad\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
	{"a=b c", "", "found 'c', expected: ',' or 'end of string'"},
	{" a = b , c != d ", "a=b,c!=d", ""},
	{"\ta\t=\tb\t", "a=b", ""},
	{"a=b,a=c", "a=b,a=c", ""},
	{"a=b,a!=b", "a=b,a!=b", ""},
	{"b=1,a=2", "a=2,b=1", ""},
	{"z,y,x", "x,y,z", ""},
	{"!z,!y", "!y,!z", ""},
	{"x=a=b", "", "found '=', expected: ',' or 'end of string'"},
	{"x=(a)", "", "unable to parse requirement: found '(', expected: identifier"},
	{"a/b=c", "a/b=c", ""},
	{"a/b/c=d", "", "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
	{"/b=c", "", "unable to parse requirement: <nil>: Invalid value: \"/b\": prefix part must be non-empty"},
	{"a/=c", "", "unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
	{"example.com/tier=web", "example.com/tier=web", ""},
	{"Example.com/tier=web", "", "unable to parse requirement: <nil>: Invalid value: \"Example.com/tier\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
	{"-a=b", "", "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
	{"a-=b", "", "unable to parse requirement: <nil>: Invalid value: \"a-\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
	{"a.b_c-d=e", "a.b_c-d=e", ""},
	{"a=b.c_d-e", "a=b.c_d-e", ""},
	{"a=-b", "", "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
	{"a=b-", "", "unable to parse requirement: values[0][a]: Invalid value: \"b-\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
	{"0123456789012345678901234567890123456789012345678901234567890123=x", "", "unable to parse requirement: <nil>: Invalid value: \"0123456789012345678901234567890123456789012345678901234567890123\": name part must be no more than 63 characters"},
	{"x=0123456789012345678901234567890123456789012345678901234567890123", "", "unable to parse requirement: values[0][x]: Invalid value: \"0123456789012345678901234567890123456789012345678901234567890123\": must be no more than 63 characters"},
	{"x in (0123456789012345678901234567890123456789012345678901234567890123,-a,_b)", "", "unable to parse requirement: [values[0][x]: Invalid value: \"-a\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), values[1][x]: Invalid value: \"0123456789012345678901234567890123456789012345678901234567890123\": must be no more than 63 characters, values[2][x]: Invalid value: \"_b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]"},
	{"x in (-a,-b)", "", "unable to parse requirement: [values[0][x]: Invalid value: \"-a\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), values[1][x]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]"},
	{"x in (a,-a)", "", "unable to parse requirement: values[0][x]: Invalid value: \"-a\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
	{"x>-1x", "", "unable to parse requirement: [values[0]: Invalid value: \"-1x\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: \"-1x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]"},
	{"x<=5", "", "unable to parse requirement: found '=', expected: identifier"},
	{"x=>5", "", "unable to parse requirement: found '>', expected: identifier"},
	{"a==", "a==", ""},
	{"a=", "a=", ""},
	{"a!=", "a!=", ""},
	{"a=,b=", "a=,b=", ""},
	{"a in (),b", "a in (),b", ""},
	{"(", "", "found '(', expected: !, identifier, or 'end of string'"},
	{")", "", "found ')', expected: !, identifier, or 'end of string'"},
	{"a)", "", "unable to parse requirement: found ')', expected: in, notin, =, ==, !=, gt, lt"},
	{"a(", "", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"},
	{"a=(b)", "", "unable to parse requirement: found '(', expected: identifier"},
	{"a,!b,c in (d)", "a,!b,c in (d)", ""},
	{"a=b,", "", "found '', expected: identifier after ','"},
	{"a=b,,c", "", "found ',', expected: identifier after ','"},
	{"a=b,!", "", "unable to parse requirement: found '', expected: identifier"},
	{"a=b,=", "", "found '=', expected: identifier after ','"},
	{"=a", "", "found '=', expected: !, identifier, or 'end of string'"},
	{"==a", "", "found '==', expected: !, identifier, or 'end of string'"},
	{"!=a", "", "found '!=', expected: !, identifier, or 'end of string'"},
	{"!!a", "", "unable to parse requirement: found '!', expected: identifier"},
	{"!=", "", "found '!=', expected: !, identifier, or 'end of string'"},
	{"a!", "", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"},
	{"a!!=b", "", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"},
	{"é=b", "", "unable to parse requirement: <nil>: Invalid value: \"é\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
	{"a=é", "", "unable to parse requirement: values[0][a]: Invalid value: \"é\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
	{"a in (é)", "", "unable to parse requirement: values[0][a]: Invalid value: \"é\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
	{"x in (a),,", "", "found ',', expected: identifier after ','"},
}

func TestParseLabelSelectorMatchesKubernetes(t *testing.T) {
	for _, c := range labelSelectorGolden {
		sel, err := ParseLabelSelector(c.in)
		if c.err != "" {
			require.Error(t, err, "%q", c.in)
			assert.Equal(t, c.err, err.Error(), "%q", c.in)
			assert.ErrorIs(t, err, ErrInvalidSelector, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		assert.Equal(t, c.canonical, sel.String(), "%q", c.in)
		again, err := ParseLabelSelector(sel.String())
		require.NoError(t, err, "canonical form of %q", c.in)
		assert.Equal(t, sel, again, "%q", c.in)
	}
}

// The message in error-400-bad-labelselector.json comes from app===demo.
func TestBadLabelSelectorFixtureMessage(t *testing.T) {
	_, err := ParseLabelSelector("app===demo")
	require.Error(t, err)
	var s Status
	require.NoError(t, s.UnmarshalJSON(readFixture(t, "error-400-bad-labelselector.json")))
	assert.Equal(t, s.Message, err.Error())
}

func TestLabelSelectorMatches(t *testing.T) {
	labels := map[string]string{"app": "web", "tier": "front", "n": "5", "empty": ""}
	cases := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"app=web", true},
		{"app==web", true},
		{"app=db", false},
		{"app!=db", true},
		{"app!=web", false},
		{"missing!=x", true}, // != matches an absent key
		{"missing=x", false},
		{"app in (db,web)", true},
		{"app in (db)", false},
		{"app notin (db)", true},
		{"app notin (web)", false},
		{"missing notin (web)", true}, // so does notin
		{"missing in (web)", false},
		{"app", true},
		{"missing", false},
		{"!missing", true},
		{"!app", false},
		{"empty", true},
		{"empty=", true},
		{"empty in ()", true},
		{"app=", false},
		{"n>4", true},
		{"n>5", false},
		{"n<6", true},
		{"n<5", false},
		{"app>1", false}, // not a number: no match
		{"missing>1", false},
		{"app=web,tier=front", true},
		{"app=web,tier=back", false},
		{"app=web,!missing,n in (5,6),tier notin (back)", true},
	}
	for _, c := range cases {
		sel, err := ParseLabelSelector(c.sel)
		require.NoError(t, err, c.sel)
		assert.Equal(t, c.want, sel.Matches(labels), c.sel)
	}
	var zero LabelSelector
	assert.True(t, zero.Empty())
	assert.True(t, zero.Matches(nil))
	assert.Equal(t, "", zero.String())
	none, _ := ParseLabelSelector("a!=b,!c,d notin (e)")
	assert.True(t, none.Matches(nil), "negative requirements match an object without labels")
}

func TestLabelSelectorRequirements(t *testing.T) {
	sel, err := ParseLabelSelector(" tier notin (b,a,a) , app = web , !canary , n > 3 ")
	require.NoError(t, err)
	assert.Equal(t, []LabelRequirement{
		{Key: "app", Operator: OpEquals, Values: []string{"web"}},
		{Key: "canary", Operator: OpDoesNotExist},
		{Key: "n", Operator: OpGreaterThan, Values: []string{"3"}},
		{Key: "tier", Operator: OpNotIn, Values: []string{"a", "b"}},
	}, sel.Requirements())
	assert.Equal(t, "app=web,!canary,n>3,tier notin (a,b)", sel.String())
	assert.False(t, sel.Empty())

	reqs := sel.Requirements()
	reqs[0].Values[0] = "changed"
	assert.Equal(t, "app=web,!canary,n>3,tier notin (a,b)", sel.String(), "Requirements returns a copy")

	v, ok := sel.RequiresExactMatch("app")
	assert.True(t, ok)
	assert.Equal(t, "web", v)
	_, ok = sel.RequiresExactMatch("tier")
	assert.False(t, ok)
	_, ok = sel.RequiresExactMatch("missing")
	assert.False(t, ok)
	in, _ := ParseLabelSelector("x in (only)")
	v, ok = in.RequiresExactMatch("x")
	assert.True(t, ok)
	assert.Equal(t, "only", v)
}

// Two requirements on one key keep the order they were written in, so the
// canonical form is stable.
func TestLabelSelectorSameKeyKeepsOrder(t *testing.T) {
	for _, in := range []string{"a=1,a!=2", "a!=2,a=1"} {
		sel, err := ParseLabelSelector(in)
		require.NoError(t, err)
		assert.Equal(t, in, sel.String())
	}
}

func TestLabelSelectorFromSet(t *testing.T) {
	sel := LabelSelectorFromSet(map[string]string{"tier": "web", "app": "demo"})
	assert.Equal(t, "app=demo,tier=web", sel.String())
	assert.True(t, sel.Matches(map[string]string{"app": "demo", "tier": "web", "x": "y"}))
	assert.False(t, sel.Matches(map[string]string{"app": "demo"}))
	assert.True(t, LabelSelectorFromSet(nil).Empty())
}

// A NUL byte is where Kubernetes' lexer stops reading (silently dropping the
// rest); we treat it as an ordinary character, which no key or value allows.
func TestLabelSelectorNULIsRejectedNotIgnored(t *testing.T) {
	for _, in := range []string{"a\x00", "a=b\x00,c", "a\x00\x00,b"} {
		_, err := ParseLabelSelector(in)
		assert.ErrorIs(t, err, ErrInvalidSelector, "%q", in)
	}
}
