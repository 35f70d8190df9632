package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubectl explain reads the served kinds' real schemas from OpenAPI v3.
func TestKubectlExplain(t *testing.T) {
	kubectlFullRunOnly(t)
	ts := startServer(t, Config{})
	k := newKubectl(t, ts)
	cm := k.run("explain", "configmap")
	assert.Contains(t, cm, "KIND:       ConfigMap")
	assert.Contains(t, cm, "ConfigMap holds configuration data for pods to consume.")
	assert.Contains(t, cm, "binaryData\t<map[string]string>")
	replicas := k.run("explain", "deployment.spec.replicas")
	assert.Contains(t, replicas, "GROUP:      apps")
	assert.Contains(t, replicas, "FIELD: replicas <integer>")
	assert.Contains(t, replicas, "Number of desired pods.")
	deep := k.run("explain", "pods.spec.containers.ports")
	assert.Contains(t, deep, "containerPort\t<integer> -required-")
	holder := k.run("explain", "lease.spec.holderIdentity")
	assert.Contains(t, holder, "GROUP:      coordination.k8s.io")
	assert.Contains(t, holder, "holderIdentity contains the identity of the holder of a current lease.")
	assert.Contains(t, k.run("explain", "replicasets.spec.replicas"), "Replicas is the number of desired")
	assert.Contains(t, k.run("explain", "events.regarding", "--api-version=events.k8s.io/v1"), "regarding contains the object this Event is about.")
	assert.Contains(t, k.run("explain", "serviceaccount.automountServiceAccountToken"), "AutomountServiceAccountToken indicates")
}

// Each group version's document carries the schemas of its kinds, every
// $ref resolvable within it (openapi-v3-*.json are where they come from).
func TestOpenAPISchemasAreTheRealOnes(t *testing.T) {
	ts := startServer(t, Config{})
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(ts.get("/openapi/v3").mustCode(t, http.StatusOK), &index))
	for gv, want := range map[string][]string{
		"api/v1":                      {"io.k8s.api.core.v1.ConfigMap", "io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.SecretList"},
		"apis/apps/v1":                {"io.k8s.api.apps.v1.Deployment", "io.k8s.api.apps.v1.ReplicaSet", "io.k8s.api.autoscaling.v1.Scale"},
		"apis/coordination.k8s.io/v1": {"io.k8s.api.coordination.v1.Lease", "io.k8s.api.coordination.v1.LeaseList"},
		"apis/events.k8s.io/v1":       {"io.k8s.api.events.v1.Event", "io.k8s.api.events.v1.EventList"},
	} {
		var doc struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		require.Contains(t, index.Paths, gv)
		require.NoError(t, json.Unmarshal(ts.get(index.Paths[gv].ServerRelativeURL).mustCode(t, http.StatusOK), &doc))
		for _, name := range want {
			assert.Contains(t, doc.Components.Schemas, name, gv)
		}
	}
	var recorded struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, "openapi-v3-apis-apps-v1.json"), &recorded))
	var ours struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(ts.get("/openapi/v3/apis/apps/v1").body, &ours))
	assert.JSONEq(t, string(recorded.Components.Schemas["io.k8s.api.apps.v1.DeploymentSpec"]), string(ours.Components.Schemas["io.k8s.api.apps.v1.DeploymentSpec"]))
}
