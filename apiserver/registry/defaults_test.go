package registry

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func objectOf(t *testing.T, js string) *api.Object {
	t.Helper()
	var o api.Object
	require.NoError(t, json.Unmarshal([]byte(js), &o))
	return &o
}

// kubectl create deployment sends "strategy":{} and no revision limit or
// deadline; the defaults land where the Go struct has them.
func TestDefaultDeployment(t *testing.T) {
	o := objectOf(t, `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{},"spec":{}},"strategy":{}}}`)
	require.NoError(t, defaultDeployment(o))
	assert.Equal(t, `{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{},"spec":{"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600}`,
		string(o.Get("spec")))

	o = objectOf(t, `{"spec":{"selector":{},"strategy":{"type":"Recreate"},"revisionHistoryLimit":2}}`)
	require.NoError(t, defaultDeployment(o))
	assert.Equal(t, `{"replicas":1,"selector":{},"strategy":{"type":"Recreate"},"revisionHistoryLimit":2,"progressDeadlineSeconds":600}`,
		string(o.Get("spec")), "Recreate gets no rollingUpdate; what is set stays")

	o = objectOf(t, `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":1}}}}`)
	require.NoError(t, defaultDeployment(o))
	assert.JSONEq(t, `{"replicas":1,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":1}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600}`,
		string(o.Get("spec")))
}

func TestDefaultReplicaSet(t *testing.T) {
	o := objectOf(t, `{"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{}}}`)
	require.NoError(t, defaultReplicaSet(o))
	assert.Equal(t, `{"replicas":1,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{}}}`, string(o.Get("spec")),
		"a template's metadata is always written")
	o = objectOf(t, `{"spec":{"replicas":0}}`)
	require.NoError(t, defaultReplicaSet(o))
	assert.Equal(t, `{"replicas":0}`, string(o.Get("spec")), "an explicit zero stays")
	o = objectOf(t, `{"metadata":{"name":"x"}}`)
	require.NoError(t, defaultReplicaSet(o))
	assert.Equal(t, `{"replicas":1}`, string(o.Get("spec")))
}

// printEvent's rules: a singleton counts 1, last seen falls back to first
// seen and first seen to eventTime, a series gives both count and last
// seen, and the two API versions read their own field names.
func TestEventRow(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 10, 0, time.UTC)
	core := objectOf(t, `{"involvedObject":{"kind":"Deployment","name":"web"},"reason":"ScalingReplicaSet","message":" Scaled up \n","source":{"component":"deployment-controller"},"firstTimestamp":"2026-11-26T08:00:00Z","type":"Normal"}`)
	assert.Equal(t, eventRow{lastSeen: "10s", firstSeen: "10s", typ: "Normal", reason: "ScalingReplicaSet", target: "deployment/web",
		source: "deployment-controller", message: "Scaled up", count: 1}, readEvent(core, coreEventFields, now))

	v1 := objectOf(t, `{"eventTime":"2026-11-26T08:00:05.000000Z","reportingController":"ctl","reportingInstance":"i-1","regarding":{"kind":"Pod","fieldPath":"spec.containers{a}"},"note":"n","series":{"count":4,"lastObservedTime":"2026-11-26T08:00:08.000000Z"}}`)
	assert.Equal(t, eventRow{lastSeen: "2s", firstSeen: "5s", target: "pod", fieldPath: "spec.containers{a}",
		source: "ctl, i-1", message: "n", count: 4}, readEvent(v1, eventsV1Fields, now))
	assert.Equal(t, "<unknown>", readEvent(objectOf(t, `{}`), coreEventFields, now).lastSeen)
}
