package registry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestNameValidation(t *testing.T) {
	assert.Empty(t, validateDNS1123Subdomain("a.b-c", false))
	assert.NotEmpty(t, validateDNS1123Subdomain("A", false))
	assert.Equal(t, []string{"must be no more than 253 characters"}, validateDNS1123Subdomain(string(make([]byte, 254)), false)[:1])
	assert.Empty(t, validateDNS1123Subdomain("demo-", true), "a generateName may end in '-'")
	assert.NotEmpty(t, validateDNS1123Subdomain("demo-", false))
	assert.Equal(t, []string{"must not contain dots"}, validateDNS1123Label("a.b", false))
	assert.NotEmpty(t, validateDNS1035Label("1a", false))
	assert.Empty(t, validateDNS1035Label("a1", false))
	assert.Empty(t, api.IsQualifiedName("example.com/My_name.x"))
	assert.NotEmpty(t, api.IsQualifiedName("a/b/c"))
	assert.NotEmpty(t, api.IsQualifiedName("/b"))
	assert.NotEmpty(t, api.IsQualifiedName("Bad_Prefix/b"))
	assert.Empty(t, api.IsValidLabelValue(""))
	assert.NotEmpty(t, api.IsValidLabelValue("-x"))
	for range 100 {
		n := GenerateName("x-")
		assert.Len(t, n, 7)
		assert.Empty(t, validateDNS1123Subdomain(n, false))
	}
	assert.Len(t, GenerateName(string(make([]byte, 100))), maxGeneratedNameLength)
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-5 * time.Second: "<invalid>", -time.Second: "0s", 0: "0s", 11 * time.Second: "11s", 119 * time.Second: "119s",
		5*time.Minute + 3*time.Second: "5m3s", 5 * time.Minute: "5m", 90 * time.Minute: "90m", 3*time.Hour + 20*time.Minute: "3h20m",
		10 * time.Hour: "10h", 50 * time.Hour: "2d2h", 48 * time.Hour: "2d", 30 * 24 * time.Hour: "30d",
		3 * 365 * 24 * time.Hour: "3y", (3*365 + 4) * 24 * time.Hour: "3y4d", 9 * 365 * 24 * time.Hour: "9y",
	} {
		assert.Equal(t, want, humanDuration(d), "%s", d)
	}
	assert.Equal(t, "<unknown>", age(time.Time{}, time.Now()))
}

// A resource served in several versions is added, replaced and removed as
// one: every version is routed by its group version, ByGroupResource finds
// the first, and a replacement may change the versions.
func TestRegistryVersionsOfOneResource(t *testing.T) {
	reg := New(Builtin())
	version := func(v string) *Entry {
		return &Entry{Resource: &Resource{Group: "example.com", Version: v, Name: "widgets", Kind: "Widget"}}
	}
	gr := api.GroupResource{Group: "example.com", Resource: "widgets"}
	v1, v1beta1 := version("v1"), version("v1beta1")
	require.NoError(t, reg.Add(v1, v1beta1))
	assert.Same(t, v1, reg.ByGroupResource(gr))
	assert.Same(t, v1beta1, reg.Lookup("example.com/v1beta1", "widgets"))
	assert.Error(t, reg.Add(version("v2")), "served already")
	assert.Error(t, reg.Add(v1, &Entry{Resource: &Resource{Group: "example.com", Version: "v1", Name: "gadgets"}}), "not one resource")

	v2 := version("v2")
	old, err := reg.Replace(v2)
	require.NoError(t, err)
	assert.Equal(t, []*Entry{v1, v1beta1}, old)
	assert.Nil(t, reg.Lookup("example.com/v1", "widgets"))
	assert.False(t, reg.ServesGroupVersion("example.com/v1beta1"))
	assert.Same(t, v2, reg.ByGroupResource(gr))

	assert.Equal(t, []*Entry{v2}, reg.Remove(gr))
	assert.Nil(t, reg.ByGroupResource(gr))
	assert.Nil(t, reg.Remove(gr))
	_, err = reg.Replace(v1)
	assert.Error(t, err, "not served")
	assert.Len(t, reg.Entries(), len(Builtin()))
}
