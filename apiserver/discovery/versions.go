package discovery

import (
	"regexp"
	"strconv"
	"strings"
)

// The order of a group's versions. A group served in several versions (a
// custom resource's v1 and v1beta1) lists them highest first, and the
// first is its preferred version: GA before beta before alpha, then the
// higher major, then the higher minor (v2, v1, v1beta2, v1beta1,
// v1alpha1), and any version not shaped so after those, in reverse
// alphabetical order. apiextensions-apiserver sorts a custom group's
// versions so for /apis/<group> (customresource_discovery_controller.go,
// sortGroupDiscoveryByKubeAwareVersion) and the aggregated document sorts
// versions of equal priority so (k8s.io/apiserver
// pkg/endpoints/discovery/aggregated/handler.go); the comparison is
// k8s.io/apimachinery pkg/version/helpers.go, CompareKubeAwareVersionStrings.

var kubeVersion = regexp.MustCompile(`^v(\d+)(?:(alpha|beta)(\d+))?$`)

// versionRank is a kube-like version's stability, major and minor;
// ok is false for a version not shaped like one.
func versionRank(v string) (stability, major, minor int, ok bool) {
	m := kubeVersion.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, 0, false
	}
	var err error
	if major, err = strconv.Atoi(m[1]); err != nil {
		return 0, 0, 0, false
	}
	switch m[2] {
	case "alpha":
		stability = 0
	case "beta":
		stability = 1
	default:
		return 2, major, 0, true
	}
	if minor, err = strconv.Atoi(m[3]); err != nil {
		return 0, 0, 0, false
	}
	return stability, major, minor, true
}

// compareVersions is positive when a sorts before b (a has the higher
// priority), negative when after, 0 when they are equal.
func compareVersions(a, b string) int {
	if a == b {
		return 0
	}
	sa, ma, na, oka := versionRank(a)
	sb, mb, nb, okb := versionRank(b)
	switch {
	case !oka && !okb:
		return strings.Compare(b, a)
	case !oka:
		return -1
	case !okb:
		return 1
	case sa != sb:
		return sa - sb
	case ma != mb:
		return ma - mb
	}
	return na - nb
}
