package kubelet

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestRunningStatusIsWhatIsRunningAndReadyAccepts(t *testing.T) {
	var spec podSpec
	require.NoError(t, json.Unmarshal([]byte(`{"containers":[{"name":"a","image":"nginx"},{"name":"b","image":"redis"}]}`), &spec))
	st := runningStatus(spec, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	raw, err := json.Marshal(st)
	require.NoError(t, err)

	p := &api.Object{}
	assert.False(t, isRunningAndReady(p), "no status")
	require.NoError(t, p.Set("status", raw))
	assert.True(t, isRunningAndReady(p))
	assert.Len(t, st.ContainerStatuses, 2)
	assert.Equal(t, "2026-01-01T00:00:00Z", st.ContainerStatuses[1].State.Running.StartedAt)

	require.NoError(t, p.Set("status", json.RawMessage(`{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}`)))
	assert.False(t, isRunningAndReady(p), "running but not ready")
	require.NoError(t, p.Set("status", json.RawMessage(`{"phase":"Pending"}`)))
	assert.False(t, isRunningAndReady(p))
}
