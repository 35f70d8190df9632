package discovery

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The order of apimachinery's CompareKubeAwareVersionStrings, highest
// first, as its doc comment gives it, with versions not shaped like
// Kubernetes' last, in reverse alphabetical order.
func TestCompareVersions(t *testing.T) {
	want := []string{"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10"}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortStableFunc(got, func(a, b string) int { return compareVersions(b, a) })
	assert.Equal(t, want, got)
	assert.Zero(t, compareVersions("v1", "v1"))
	assert.Positive(t, compareVersions("v1", "v1beta1"))
	assert.Negative(t, compareVersions("v1alpha1", "v1beta1"))
}
