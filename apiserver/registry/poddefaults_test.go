package registry

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestImagePullPolicyByTag(t *testing.T) {
	for image, want := range map[string]string{
		"nginx":                            "Always",
		"nginx:latest":                     "Always",
		"busybox:1.36":                     "IfNotPresent",
		"registry.k8s.io/pause:3.10":       "IfNotPresent",
		"localhost:5000/app":               "Always",
		"localhost:5000/app:v1":            "IfNotPresent",
		"nginx@sha256:0123456789abcdef":    "IfNotPresent",
		"nginx:latest@sha256:0123456789ab": "Always",
		"Nginx":                            "IfNotPresent", // does not parse: no tag
		"":                                 "IfNotPresent",
	} {
		assert.Equal(t, want, pullPolicyFor(image), image)
	}
}

// Every default of a container, a probe, a port, the environment and the
// volumes, in the order the real server writes them.
func TestDefaultPodSpecNested(t *testing.T) {
	spec, err := parseMembers(json.RawMessage(`{"volumes":[{"name":"a"},{"name":"s","secret":{"secretName":"x"}},` +
		`{"name":"h","hostPath":{"path":"/p"}},{"name":"p","projected":{"sources":[{"serviceAccountToken":{"path":"t"}}]}}],` +
		`"containers":[{"name":"c","image":"nginx:1","ports":[{"containerPort":80}],` +
		`"env":[{"name":"N","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],` +
		`"livenessProbe":{"httpGet":{"port":80}},"readinessProbe":{"grpc":{"port":9},"periodSeconds":5}}],` +
		`"serviceAccount":"old"}`))
	require.NoError(t, err)
	defaultPodSpec(&spec)
	assert.Equal(t, `{"volumes":[{"name":"a","emptyDir":{}},{"name":"s","secret":{"secretName":"x","defaultMode":420}},`+
		`{"name":"h","hostPath":{"path":"/p","type":""}},{"name":"p","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3600,"path":"t"}}],"defaultMode":420}}],`+
		`"containers":[{"name":"c","image":"nginx:1","ports":[{"containerPort":80,"protocol":"TCP"}],`+
		`"env":[{"name":"N","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}}],"resources":{},`+
		`"livenessProbe":{"httpGet":{"path":"/","port":80,"scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},`+
		`"readinessProbe":{"grpc":{"port":9,"service":""},"timeoutSeconds":1,"periodSeconds":5,"successThreshold":1,"failureThreshold":3},`+
		`"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],`+
		`"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"old","serviceAccount":"old",`+
		`"securityContext":{},"schedulerName":"default-scheduler"}`, string(spec.marshal()))

	again := append(members(nil), spec...)
	defaultPodSpec(&again)
	assert.Equal(t, string(spec.marshal()), string(again.marshal()), "defaulting twice changes nothing")
}

// What a Pod gets and a template does not: requests from limits,
// enableServiceLinks, host ports on the host's network.
func TestDefaultPodOnly(t *testing.T) {
	o := objectOf(t, `{"spec":{"hostNetwork":true,"terminationGracePeriodSeconds":-5,"containers":[{"name":"c","image":"i",`+
		`"ports":[{"containerPort":8080}],"resources":{"limits":{"memory":"1Gi","cpu":"1"},"requests":{"memory":"512Mi"}}}]}}`)
	require.NoError(t, defaultPod(o))
	var spec struct {
		TerminationGracePeriodSeconds int
		EnableServiceLinks            bool
		Containers                    []struct {
			Ports     []map[string]any
			Resources json.RawMessage
		}
	}
	require.NoError(t, json.Unmarshal(o.Get("spec"), &spec))
	assert.Equal(t, 1, spec.TerminationGracePeriodSeconds)
	assert.True(t, spec.EnableServiceLinks)
	assert.Equal(t, map[string]any{"containerPort": 8080.0, "hostPort": 8080.0, "protocol": "TCP"}, spec.Containers[0].Ports[0])
	assert.Equal(t, `{"limits":{"memory":"1Gi","cpu":"1"},"requests":{"cpu":"1","memory":"512Mi"}}`, string(spec.Containers[0].Resources))
}

func TestPodQOS(t *testing.T) {
	for want, containers := range map[string]string{
		"BestEffort": `[{"name":"a"},{"name":"b","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]`,
		"Guaranteed": `[{"name":"a","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1000m","memory":"1024Mi"}}}]`,
		"Burstable":  `[{"name":"a","resources":{"requests":{"cpu":"100m"}}}]`,
	} {
		spec := members{{name: "containers", raw: json.RawMessage(containers)}}
		assert.Equal(t, want, podQOS(spec), containers)
	}
	mixed := members{{name: "containers", raw: json.RawMessage(`[{"name":"a"},{"name":"b","resources":{"limits":{"cpu":"1","memory":"1"}}}]`)}}
	assert.Equal(t, "Burstable", podQOS(mixed), "one BestEffort and one Guaranteed container")
	assert.Equal(t, 0, quantityOf(json.RawMessage(`"1.5Gi"`)).Cmp(quantityOf(json.RawMessage(`1610612736`))))
	assert.Equal(t, 0, quantityOf(json.RawMessage(`"1e3"`)).Cmp(quantityOf(json.RawMessage(`"1k"`))))
}

func TestAdmitPodCreate(t *testing.T) {
	sa := objectOf(t, `{"metadata":{"name":"robot","namespace":"ns"},"automountServiceAccountToken":false,"imagePullSecrets":[{"name":"pull"}]}`)
	lookup := func(_ context.Context, gr api.GroupResource, ns, name string) (*api.Object, error) {
		if gr.Resource == "serviceaccounts" && ns == "ns" && name == "robot" {
			return sa, nil
		}
		return nil, nil
	}
	o := objectOf(t, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"serviceAccountName":"robot","containers":[{"name":"c"}],`+
		`"tolerations":[{"operator":"Exists"}]}}`)
	require.NoError(t, admitPodCreate(context.Background(), o, lookup))
	assert.Equal(t, `{"serviceAccountName":"robot","containers":[{"name":"c"}],"imagePullSecrets":[{"name":"pull"}],`+
		`"tolerations":[{"operator":"Exists"}],"priority":0,"preemptionPolicy":"PreemptLowerPriority"}`, string(o.Get("spec")),
		"the ServiceAccount says no token; a toleration of everything tolerates both taints")

	o = objectOf(t, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"priorityClassName":"system-node-critical","containers":[{"name":"c","volumeMounts":[{"name":"mine","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}]}]}}`)
	require.NoError(t, admitPodCreate(context.Background(), o, lookup))
	var spec struct {
		ServiceAccountName string
		Volumes            []any
		Priority           int64
		Tolerations        []map[string]any
	}
	require.NoError(t, json.Unmarshal(o.Get("spec"), &spec))
	assert.Equal(t, "default", spec.ServiceAccountName)
	assert.Empty(t, spec.Volumes, "the one container mounts something of its own at the token's path")
	assert.Equal(t, int64(2000001000), spec.Priority)
	assert.Len(t, spec.Tolerations, 2)

	o = objectOf(t, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"priorityClassName":"gold","containers":[{"name":"c"}]}}`)
	err := admitPodCreate(context.Background(), o, lookup)
	var st *api.Status
	require.ErrorAs(t, err, &st)
	assert.Equal(t, int32(http.StatusForbidden), st.Code)
	assert.Equal(t, `pods "p" is forbidden: no PriorityClass with name gold was found`, st.Message)
}
