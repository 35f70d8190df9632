package registry

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Pod spec defaulting: what kube-apiserver 1.37.2 fills in on every
// PodSpec it decodes, a Pod's or a pod template's alike. The generated
// SetObjectDefaults_Pod, _PodTemplate, and apps/v1's _Deployment and
// _ReplicaSet (pkg/apis/core/v1 and pkg/apis/apps/v1,
// zz_generated.defaults.go) call SetDefaults_PodSpec and then walk the
// spec: every volume, container and probe gets its own SetDefaults_<Type>
// from pkg/apis/core/v1/defaults.go, and a few fields their declarative
// +default tags (a port's protocol). Pods get more on top
// (poddefaults.go): SetDefaults_Pod, admission, their strategy.
//
// Left out: SetDefaults_ResourceList, which rounds every quantity up to
// milli precision, and the canonical form the real server writes a
// quantity back in ("1024" as "1Ki"): ours stores quantities as sent.

// The values defaults.go writes, as in k8s.io/api v0.37.2 core/v1.
const (
	terminationMessagePathDefault = `"/dev/termination-log"` // TerminationMessagePathDefault
	defaultGracePeriod            = `30`                     // DefaultTerminationGracePeriodSeconds
	defaultSchedulerName          = `"default-scheduler"`    // DefaultSchedulerName
	volumeDefaultMode             = `420`                    // 0644, the *VolumeSourceDefaultMode constants
)

// defaultPodSpec is SetDefaults_PodSpec and the walk of the spec that
// follows it in the generated SetObjectDefaults_PodTemplate.
func defaultPodSpec(spec *members) {
	// The deprecated serviceAccount is an alias of serviceAccountName,
	// which wins when both are set.
	if spec.str("serviceAccountName") == "" && spec.str("serviceAccount") != "" {
		spec.set("serviceAccountName", spec.get("serviceAccount"), podSpecOrder)
	}
	if name := spec.str("serviceAccountName"); name != "" {
		spec.set("serviceAccount", json.RawMessage(quote(name)), podSpecOrder)
	}
	spec.setIfZero("dnsPolicy", `"ClusterFirst"`, podSpecOrder)
	spec.setIfZero("restartPolicy", `"Always"`, podSpecOrder)
	spec.setDefault("securityContext", `{}`, podSpecOrder)
	spec.setDefault("terminationGracePeriodSeconds", defaultGracePeriod, podSpecOrder)
	spec.setIfZero("schedulerName", defaultSchedulerName, podSpecOrder)

	spec.editEach("volumes", defaultVolume)
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		spec.editEach(list, defaultContainer)
	}
}

// defaultContainer is SetDefaults_Container (SetDefaults_EphemeralContainer
// is the same) and the generated walk of its ports, environment and
// probes.
func defaultContainer(c *members) {
	// ResourceRequirements is a struct, not a pointer: Go's encoder always
	// writes it, so every container the real server answers has
	// "resources", {} when none were asked for.
	c.setDefault("resources", `{}`, containerOrder)
	c.setIfZero("terminationMessagePath", terminationMessagePathDefault, containerOrder)
	c.setIfZero("terminationMessagePolicy", `"File"`, containerOrder)
	c.setIfZero("imagePullPolicy", quote(pullPolicyFor(c.str("image"))), containerOrder)

	c.editEach("ports", func(p *members) { p.setIfZero("protocol", `"TCP"`, containerPortOrder) })
	c.editEach("env", func(e *members) {
		e.edit("valueFrom", func(from *members) {
			from.edit("fieldRef", defaultFieldRef)
			from.edit("fileKeyRef", func(f *members) { f.setDefault("optional", `false`, fileKeyRefOrder) })
		})
	})
	for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		c.edit(probe, defaultProbe)
	}
	c.edit("lifecycle", func(l *members) {
		for _, hook := range []string{"postStart", "preStop"} {
			l.edit(hook, func(h *members) { h.edit("httpGet", defaultHTTPGet) })
		}
	})
}

// pullPolicyFor is the imagePullPolicy SetDefaults_Container gives an
// image: Always for the tag latest (which no tag and no digest means),
// else IfNotPresent.
func pullPolicyFor(image string) string {
	if imageTag(image) == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// tagRE is a docker reference's tag (github.com/distribution/reference).
var tagRE = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)

// imageTag is the tag pkg/util/parsers ParseImageName reads from an image
// reference: the one written, "latest" when there is neither tag nor
// digest, and "" when there is only a digest or the reference does not
// parse (a simplification of the reference grammar: an empty name, an
// upper-case path or a malformed tag).
func imageTag(image string) string {
	name, digest, hasDigest := strings.Cut(image, "@")
	if name == "" || (hasDigest && digest == "") {
		return ""
	}
	path, tag := name, ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		path, tag = name[:i], name[i+1:]
		if !tagRE.MatchString(tag) {
			return ""
		}
	}
	// A first component with a dot, a colon or a capital, or localhost,
	// is the registry's host (reference.splitDockerDomain); the rest may
	// not have capitals.
	if host, rest, ok := strings.Cut(path, "/"); ok &&
		(strings.ContainsAny(host, ".:") || host == "localhost" || strings.ToLower(host) != host) {
		path = rest
	}
	if path == "" || strings.ToLower(path) != path {
		return ""
	}
	if tag == "" && !hasDigest {
		return "latest"
	}
	return tag
}

// defaultProbe is SetDefaults_Probe and its handler's defaults.
func defaultProbe(p *members) {
	p.setIfZero("timeoutSeconds", `1`, probeOrder)
	p.setIfZero("periodSeconds", `10`, probeOrder)
	p.setIfZero("successThreshold", `1`, probeOrder)
	p.setIfZero("failureThreshold", `3`, probeOrder)
	p.edit("httpGet", defaultHTTPGet)
	p.edit("grpc", func(g *members) { g.setDefault("service", `""`, grpcOrder) })
}

// defaultHTTPGet is SetDefaults_HTTPGetAction. (The H2CContainerProbe
// feature, alpha and off in 1.37, would also default its protocol.)
func defaultHTTPGet(h *members) {
	h.setIfZero("path", `"/"`, httpGetOrder)
	h.setIfZero("scheme", `"HTTP"`, httpGetOrder)
}

// defaultFieldRef is SetDefaults_ObjectFieldSelector.
func defaultFieldRef(f *members) { f.setIfZero("apiVersion", `"v1"`, fieldRefOrder) }

// defaultVolume is SetDefaults_Volume (a volume with no source is an
// emptyDir) and the defaults of each source the generated walk visits.
func defaultVolume(v *members) {
	if !v.hasAny(volumeSources) {
		v.set("emptyDir", json.RawMessage(`{}`), volumeOrder)
	}
	v.edit("hostPath", func(h *members) { h.setDefault("type", `""`, hostPathOrder) }) // HostPathUnset
	v.edit("secret", func(s *members) { s.setDefault("defaultMode", volumeDefaultMode, secretVolumeOrder) })
	v.edit("configMap", func(s *members) { s.setDefault("defaultMode", volumeDefaultMode, configMapVolumeOrder) })
	v.edit("downwardAPI", func(d *members) {
		d.setDefault("defaultMode", volumeDefaultMode, downwardAPIOrder)
		d.editEach("items", func(i *members) { i.edit("fieldRef", defaultFieldRef) })
	})
	v.edit("projected", defaultProjected)
	v.edit("iscsi", func(s *members) { s.setIfZero("iscsiInterface", `"default"`, iscsiOrder) })
	v.edit("rbd", func(s *members) {
		s.setIfZero("pool", `"rbd"`, rbdOrder)
		s.setIfZero("user", `"admin"`, rbdOrder)
		s.setIfZero("keyring", `"/etc/ceph/keyring"`, rbdOrder)
	})
	v.edit("azureDisk", func(s *members) {
		s.setDefault("cachingMode", `"ReadWrite"`, azureDiskOrder)
		s.setDefault("fsType", `"ext4"`, azureDiskOrder)
		s.setDefault("readOnly", `false`, azureDiskOrder)
		s.setDefault("kind", `"Shared"`, azureDiskOrder)
	})
	v.edit("scaleIO", func(s *members) {
		s.setIfZero("storageMode", `"ThinProvisioned"`, scaleIOOrder)
		s.setIfZero("fsType", `"xfs"`, scaleIOOrder)
	})
	v.edit("ephemeral", func(e *members) {
		e.edit("volumeClaimTemplate", func(t *members) {
			t.edit("spec", func(s *members) { s.setDefault("volumeMode", `"Filesystem"`, pvcSpecOrder) })
		})
	})
	// The ImageVolume feature, GA in 1.36: an image volume's pull policy
	// by its reference's tag, as a container's.
	v.edit("image", func(s *members) {
		s.setIfZero("pullPolicy", quote(pullPolicyFor(s.str("reference"))), imageVolumeOrder)
	})
}

// defaultProjected is SetDefaults_ProjectedVolumeSource and its sources':
// a service account token expires after an hour unless asked otherwise
// (SetDefaults_ServiceAccountTokenProjection).
func defaultProjected(p *members) {
	p.setDefault("defaultMode", volumeDefaultMode, projectedOrder)
	p.editEach("sources", func(s *members) {
		s.edit("downwardAPI", func(d *members) {
			d.editEach("items", func(i *members) { i.edit("fieldRef", defaultFieldRef) })
		})
		s.edit("serviceAccountToken", func(t *members) {
			t.setDefault("expirationSeconds", `3600`, tokenProjectionOrder)
		})
	})
}

// defaultPodTemplateSpec defaults a PodTemplateSpec (a Deployment's or
// ReplicaSet's spec.template, a PodTemplate's template): its spec as
// above. Its metadata is a struct in Go, so the real server always writes
// it, {} when the client sent none.
func defaultPodTemplateSpec(t *members) {
	t.setDefault("metadata", `{}`, podTemplateSpecOrder)
	t.edit("spec", defaultPodSpec)
}
