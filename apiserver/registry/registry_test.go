package registry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
