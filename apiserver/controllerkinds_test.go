package apiserver

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kinds Kubernetes' controllers use, against what kube-apiserver
// 1.37.2 answered to the same requests (the kinds-* recordings; their
// requests are reference/recordings/controllers.json, replayed here
// step by step on our server).

// recordedStep is one step of the recording script.
type recordedStep struct {
	File, Method, Path, Body string
	Headers                  map[string]string
}

// controllerKindsScript reads the script the kinds-* recordings came from,
// by the file each step wrote.
func controllerKindsScript(t *testing.T) map[string]recordedStep {
	t.Helper()
	b, err := os.ReadFile("../reference/recordings/controllers.json")
	require.NoError(t, err)
	var steps []recordedStep
	require.NoError(t, json.Unmarshal(b, &steps))
	out := map[string]recordedStep{}
	for _, s := range steps {
		if s.File != "" {
			out[s.File] = s
		}
	}
	return out
}

// replay sends the script's request that recorded file to our server.
func (ts *testServer) replay(script map[string]recordedStep, file string) response {
	ts.t.Helper()
	s, ok := script[file]
	require.True(ts.t, ok, "no step records %s", file)
	return ts.do(req{method: s.Method, path: s.Path, body: s.Body, header: s.Headers})
}

// recordedCode is the status code of a recording: the one its name ends in
// (-201, -400), else 200.
func recordedCode(file string) int {
	for _, c := range []int{201, 400, 422} {
		if strings.Contains(file, "-"+strconv.Itoa(c)+".") {
			return c
		}
	}
	return http.StatusOK
}

func TestControllerKindsAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	script := controllerKindsScript(t)
	send := func(file string) []byte {
		t.Helper()
		return ts.replay(script, file).mustCode(t, recordedCode(file))
	}
	specOf := func(b []byte) map[string]json.RawMessage {
		var o struct{ Spec map[string]json.RawMessage }
		require.NoError(t, json.Unmarshal(b, &o))
		return o.Spec
	}

	// Defaults: what a Deployment and a ReplicaSet left out, their pod
	// templates' included.
	got, want := specOf(send("kinds-deployment-create-defaults-201.json")), specOf(fixture(t, "kinds-deployment-create-defaults-201.json"))
	for _, k := range []string{"replicas", "strategy", "revisionHistoryLimit", "progressDeadlineSeconds", "template"} {
		assert.JSONEq(t, string(want[k]), string(got[k]), "spec.%s", k)
	}
	rs := send("kinds-replicaset-create-201.json")
	assert.JSONEq(t, "1", string(specOf(rs)["replicas"]))
	var st struct{ Status json.RawMessage }
	require.NoError(t, json.Unmarshal(rs, &st))
	assert.Equal(t, `{"replicas":0}`, string(st.Status), "a new ReplicaSet's status, as recorded")
	assert.Equal(t, int64(1), ts.get("/apis/apps/v1/namespaces/kinds/replicasets/web-rs").object(t).Metadata.Generation)

	// The scale subresource, and status written through its own path.
	requireSameJSON(t, "kinds-replicaset-scale-get-200.json", send("kinds-replicaset-scale-get-200.json"))
	requireSameJSON(t, "kinds-replicaset-scale-patch-200.json", send("kinds-replicaset-scale-patch-200.json"))
	after := ts.get("/apis/apps/v1/namespaces/kinds/replicasets/web-rs").object(t)
	assert.Equal(t, int64(2), after.Metadata.Generation, "spec.replicas changed")
	put := ts.replay(script, "kinds-replicaset-status-put-200.json").object(t)
	recorded := response{code: http.StatusOK, body: fixture(t, "kinds-replicaset-status-put-200.json")}.object(t)
	assert.JSONEq(t, string(recorded.Get("status")), string(put.Get("status")))
	assert.JSONEq(t, "3", string(specOf(put.AppendJSON(nil))["replicas"]), "a write of /status keeps spec")
	assert.Equal(t, recorded.Metadata.Generation, put.Metadata.Generation)

	// Leases keep their MicroTimes; ServiceAccounts are metadata.
	assert.JSONEq(t, string(specOf(fixture(t, "kinds-lease-create-201.json"))["holderIdentity"]),
		string(specOf(send("kinds-lease-create-201.json"))["holderIdentity"]))
	assert.Equal(t, specOf(fixture(t, "kinds-lease-create-201.json")), specOf(ts.get("/apis/coordination.k8s.io/v1/namespaces/kinds/leases/leader").mustCode(t, http.StatusOK)))
	requireSameJSON(t, "kinds-serviceaccount-create-201.json", send("kinds-serviceaccount-create-201.json"))
	// Field selectors: the same 400s, and the same matches, each with
	// the Events there were when it was recorded.
	sameNames := func(f string) {
		t.Helper()
		var l, w struct {
			Items []struct{ Metadata struct{ Name string } }
		}
		require.NoError(t, json.Unmarshal(send(f), &l))
		require.NoError(t, json.Unmarshal(fixture(t, f), &w))
		assert.Equal(t, w.Items, l.Items, f)
	}
	send("kinds-event-create-201.json")
	sameNames("kinds-event-fieldselector-involvedobject.json")
	send("kinds-eventsv1-create-201.json")
	sameNames("kinds-eventsv1-fieldselector-regarding.json")
	for _, f := range []string{"kinds-replicaset-fieldselector-status-replicas-400.json", "kinds-lease-fieldselector-400.json",
		"kinds-event-fieldselector-400.json", "kinds-eventsv1-fieldselector-source-400.json"} {
		requireSameJSON(t, f, send(f))
	}
}

// kubectl get's Tables of the new kinds: the recorded column definitions,
// and the recorded cells but for the ages (which depend on the clock).
func TestControllerKindsTablesAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	script := controllerKindsScript(t)
	for _, f := range []string{"kinds-replicaset-create-201.json", "kinds-lease-create-201.json", "kinds-serviceaccount-create-201.json",
		"kinds-event-create-201.json", "kinds-eventsv1-create-201.json"} {
		ts.replay(script, f).mustCode(t, http.StatusCreated)
	}
	for _, c := range []struct {
		file string
		ages []int // cells that are ages
		rows int   // the rows we have: the last ones of rowsFrom
		// rowsFrom is the recording whose rows ours are (file if ""):
		// kubectl get events was recorded before the events.k8s.io Event
		// was created, so both rows are in the events.k8s.io Table,
		// printed alike (printEvent).
		rowsFrom string
	}{
		{"kinds-table-list-replicasets-kubectl.json", []int{4}, 1, ""},
		{"kinds-table-list-leases-kubectl.json", []int{2}, 1, ""},
		{"kinds-table-list-serviceaccounts-kubectl.json", []int{1}, 1, ""},
		// Both Events, whichever API wrote them: one collection.
		{"kinds-table-list-events-kubectl.json", []int{0, 7}, 2, "kinds-table-list-eventsv1-kubectl.json"},
		{"kinds-table-list-eventsv1-kubectl.json", []int{0, 7}, 2, ""},
	} {
		t.Run(c.file, func(t *testing.T) {
			var got, want, rows tableJSON
			require.NoError(t, json.Unmarshal(ts.replay(script, c.file).mustCode(t, http.StatusOK), &got))
			require.NoError(t, json.Unmarshal(fixture(t, c.file), &want))
			assert.Equal(t, want.ColumnDefinitions, got.ColumnDefinitions, "column definitions are Kubernetes' own")
			if c.rowsFrom == "" {
				c.rowsFrom = c.file
			}
			require.NoError(t, json.Unmarshal(fixture(t, c.rowsFrom), &rows))
			require.Len(t, got.Rows, c.rows)
			for i, row := range got.Rows {
				w := rows.Rows[len(rows.Rows)-c.rows+i].Cells
				g := row.Cells
				for _, i := range c.ages {
					w[i], g[i] = "<age>", "<age>"
				}
				assert.Equal(t, w, g)
			}
		})
	}
}

// Discovery of the new kinds: each entry as 1.37.2 lists it, and /apis in
// its group order.
func TestControllerKindsDiscoveryAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	for path, file := range map[string]string{
		"/api/v1": "kinds-discovery-api-v1.json", "/apis/apps/v1": "kinds-discovery-apis-apps-v1.json",
		"/apis/coordination.k8s.io/v1": "kinds-discovery-apis-coordination-v1.json",
		"/apis/events.k8s.io/v1":       "kinds-discovery-apis-events-v1.json",
	} {
		var want, got apiResourceListJSON
		require.NoError(t, json.Unmarshal(fixture(t, file), &want))
		require.NoError(t, json.Unmarshal(ts.get(path).mustCode(t, http.StatusOK), &got))
		assert.Equal(t, want.APIVersion, got.APIVersion, path)
		for _, r := range got.Resources {
			i := slices.IndexFunc(want.Resources, func(w map[string]any) bool { return w["name"] == r["name"] })
			if !assert.GreaterOrEqual(t, i, 0, "%s %s is served by kube-apiserver 1.37.2", path, r["name"]) {
				continue
			}
			assert.Equal(t, want.Resources[i], r, "%s %s", path, r["name"])
		}
	}
	groups := func(b []byte) []string {
		var l struct{ Groups []struct{ Name string } }
		require.NoError(t, json.Unmarshal(b, &l))
		var out []string
		for _, g := range l.Groups {
			out = append(out, g.Name)
		}
		return out
	}
	var recorded []string
	ours := groups(ts.get("/apis").mustCode(t, http.StatusOK))
	for _, g := range groups(fixture(t, "kinds-discovery-apis.json")) {
		if slices.Contains(ours, g) {
			recorded = append(recorded, g)
		}
	}
	assert.Equal(t, recorded, ours, "the groups we serve, in kube-apiserver's order")
}
