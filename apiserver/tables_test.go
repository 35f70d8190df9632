package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubectlGetAccept is the Accept header of kubectl get (and get -w).
var kubectlGetAccept = map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"}

// TestTablesOfEveryKind: kubectl get's Table for deployments, pods,
// secrets and services has the recorded column definitions, and the cells
// the real server printed for the same objects (the fixtures' entries
// describe them).
func TestTablesOfEveryKind(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	post := func(path, body string) {
		t.Helper()
		ts.do(req{method: "POST", path: path, body: body}).mustCode(t, http.StatusCreated)
	}
	post("/apis/apps/v1/namespaces/fixtures2/deployments", `{"metadata":{"name":"web","labels":{"app":"web"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`)
	post("/api/v1/namespaces/fixtures2/pods", `{"metadata":{"name":"tbl-pod","labels":{"app":"tbl"}},"spec":{"containers":[{"name":"main","image":"busybox:1.36","command":["sleep","3600"]}]}}`)
	post("/api/v1/namespaces/fixtures2/secrets", `{"metadata":{"name":"tbl-secret"},"data":{"a":"MQ==","b":"Mg=="}}`)
	post("/api/v1/namespaces/fixtures2/services", `{"metadata":{"name":"web"},"spec":{"clusterIP":"10.0.0.246","selector":{"app":"web"},"ports":[{"port":80}]}}`)

	for _, c := range []struct {
		fixture, path string
		cells         []any
	}{
		{"table-list-deployments-kubectl.json", "/apis/apps/v1/namespaces/fixtures2/deployments",
			[]any{"web", "0/2", float64(0), float64(0), "0s", "web", "nginx:1.27", "app=web"}},
		{"table-list-pods-kubectl.json", "/api/v1/namespaces/fixtures2/pods",
			[]any{"tbl-pod", "0/1", "Pending", "0", "0s", "<none>", "<none>", "<none>", "<none>"}},
		{"table-list-secrets-kubectl.json", "/api/v1/namespaces/fixtures2/secrets",
			[]any{"tbl-secret", "Opaque", float64(2), "0s"}},
		{"table-list-services-kubectl.json", "/api/v1/namespaces/fixtures2/services",
			[]any{"web", "ClusterIP", "10.0.0.246", "<none>", "80/TCP", "0s", "app=web"}},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			body := ts.do(req{path: c.path + "?limit=500", header: kubectlGetAccept}).mustCode(t, http.StatusOK)
			requireSameShape(t, c.fixture, body)
			var got, want tableJSON
			require.NoError(t, json.Unmarshal(body, &got))
			require.NoError(t, json.Unmarshal(fixture(t, c.fixture), &want))
			assert.Equal(t, want.ColumnDefinitions, got.ColumnDefinitions, "column definitions are Kubernetes' own")
			require.Len(t, got.Rows, 1)
			cells := got.Rows[0].Cells
			if age, ok := cells[ageIndex(got)].(string); ok && strings.HasSuffix(age, "s") {
				cells[ageIndex(got)] = "0s" // however long the test took
			}
			assert.Equal(t, c.cells, cells)
		})
	}

	// The default type is stored, not only printed.
	assert.Equal(t, `"Opaque"`, string(ts.get("/api/v1/namespaces/fixtures2/secrets/tbl-secret").object(t).Get("type")))
}

// TestTableIncludeObject: ?includeObject= picks what a row's object is,
// as kube-apiserver's asTable does: the whole object for Object (kubectl
// get --sort-by asks for it; table-list-pods-includeobject.json), null for
// None, metadata otherwise; any other value is 400.
func TestTableIncludeObject(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	ts.do(req{method: "POST", path: "/api/v1/namespaces/fixtures2/pods",
		body: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"main","image":"busybox:1.36"}]}}`}).mustCode(t, http.StatusCreated)
	rowObject := func(include string) map[string]any {
		t.Helper()
		body := ts.do(req{path: "/api/v1/namespaces/fixtures2/pods?includeObject=" + include, header: kubectlGetAccept}).mustCode(t, http.StatusOK)
		var tbl struct {
			Rows []struct{ Object map[string]any }
		}
		require.NoError(t, json.Unmarshal(body, &tbl))
		require.Len(t, tbl.Rows, 1)
		return tbl.Rows[0].Object
	}
	whole := rowObject("Object")
	assert.Equal(t, "Pod", whole["kind"])
	assert.Equal(t, "v1", whole["apiVersion"])
	assert.Contains(t, whole, "spec")
	assert.Equal(t, "PartialObjectMetadata", rowObject("Metadata")["kind"])
	assert.Equal(t, "PartialObjectMetadata", rowObject("")["kind"])
	assert.Nil(t, rowObject("None"))

	st := ts.do(req{path: "/api/v1/namespaces/fixtures2/pods?includeObject=All", header: kubectlGetAccept}).mustCode(t, http.StatusBadRequest)
	assert.Contains(t, string(st), `Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty`)
}

// ageIndex finds the Age column.
func ageIndex(tbl tableJSON) int {
	for i, c := range tbl.ColumnDefinitions {
		if c["name"] == "Age" {
			return i
		}
	}
	return -1
}

// TestTableWatch: kubectl get -w's watch streams Table-wrapped events, as
// watch-table-kubectl-get-w.jsonl and watch-table-deployments.jsonl show:
// one row each, the column definitions only in the first event.
func TestTableWatch(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	for _, c := range []struct {
		fixture, path, create, patch string
	}{
		{"watch-table-kubectl-get-w.jsonl", "/api/v1/namespaces/fixtures2/configmaps",
			`{"metadata":{"name":"tw","labels":{"app":"tw"}},"data":{"k":"v"}}`, `{"data":{"k":"v2"}}`},
		{"watch-table-deployments.jsonl", "/apis/apps/v1/namespaces/fixtures2/deployments",
			`{"metadata":{"name":"wt-deploy","labels":{"app":"wt"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"wt"}},"template":{"metadata":{"labels":{"app":"wt"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`,
			`{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`},
		// A Pod's deletion is two events, MODIFIED (Terminating) then
		// DELETED, as the real server deletes an unscheduled Pod.
		{"watch-table-pods.jsonl", "/api/v1/namespaces/fixtures2/pods",
			`{"metadata":{"name":"wt-pod","labels":{"app":"wt"}},"spec":{"containers":[{"name":"main","image":"busybox:1.36","command":["sleep","3600"]}]}}`,
			`{"metadata":{"labels":{"tier":"x"}}}`},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			list := ts.do(req{path: c.path + "?limit=500", header: kubectlGetAccept}).mustCode(t, http.StatusOK)
			var lm struct {
				Metadata struct{ ResourceVersion string }
			}
			require.NoError(t, json.Unmarshal(list, &lm))

			ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
			defer cancel()
			hr, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL()+c.path+"?watch=true&resourceVersion="+lm.Metadata.ResourceVersion, nil)
			require.NoError(t, err)
			hr.Header.Set("Accept", kubectlGetAccept["Accept"])
			resp, err := ts.client.Do(hr)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))

			var name struct{ Metadata struct{ Name string } }
			require.NoError(t, json.Unmarshal([]byte(c.create), &name))
			ts.do(req{method: "POST", path: c.path, body: c.create}).mustCode(t, http.StatusCreated)
			ts.do(req{method: "PATCH", path: c.path + "/" + name.Metadata.Name, body: c.patch,
				header: map[string]string{"Content-Type": "application/merge-patch+json"}}).mustCode(t, http.StatusOK)
			ts.do(req{method: "DELETE", path: c.path + "/" + name.Metadata.Name}).mustCode(t, http.StatusOK)

			recorded := strings.SplitAfter(strings.TrimSuffix(string(fixture(t, c.fixture)), "\n"), "\n")
			br := bufio.NewReader(resp.Body)
			for i, want := range recorded {
				line, err := br.ReadBytes('\n')
				require.NoError(t, err, "event %d", i)
				var w, g map[string]any
				require.NoError(t, json.Unmarshal([]byte(want), &w))
				require.NoError(t, json.Unmarshal(line, &g), "%s", line)
				assert.Equal(t, w["type"], g["type"])
				assert.Equal(t, shapeOf(w), shapeOf(g), "event %d: %s", i, line)
				wo, go_ := w["object"].(map[string]any), g["object"].(map[string]any)
				assert.Equal(t, wo["columnDefinitions"], go_["columnDefinitions"], "event %d: definitions only in the first", i)
				rows := go_["rows"].([]any)
				require.Len(t, rows, 1)
				row := rows[0].(map[string]any)
				obj := row["object"].(map[string]any)["metadata"].(map[string]any)
				assert.Equal(t, obj["resourceVersion"], go_["metadata"].(map[string]any)["resourceVersion"], "the Table is at the event's resourceVersion")
				if c.fixture != "watch-table-kubectl-get-w.jsonl" {
					cells := row["cells"].([]any)
					wantCells := wo["rows"].([]any)[0].(map[string]any)["cells"].([]any)
					cells[4], wantCells[4] = "", "" // Age
					assert.Equal(t, wantCells, cells, "event %d", i)
				}
			}
		})
	}
}

// A watch-list asked for as Tables (Kubernetes' e2e "server supports
// sending resources in Table format") sends each initial object as a
// Table of one row, then the initial-events-end BOOKMARK as a Table too:
// one row printed from the bookmark's object, whose row object is its
// metadata with the k8s.io/initial-events-end annotation, as
// kube-apiserver 1.37.2 transforms every event's object.
func TestTableWatchList(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	for _, name := range []string{"secret-1", "secret-2"} {
		ts.do(req{method: "POST", path: "/api/v1/namespaces/fixtures2/secrets",
			body: `{"metadata":{"name":"` + name + `","labels":{"watchlist":"true"}}}`}).mustCode(t, http.StatusCreated)
	}
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL()+"/api/v1/namespaces/fixtures2/secrets?watch=1&sendInitialEvents=true"+
		"&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=watchlist%3Dtrue", nil)
	require.NoError(t, err)
	hr.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := ts.client.Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	type row struct {
		Cells  []any `json:"cells"`
		Object struct {
			Kind     string
			Metadata struct {
				Name        string
				Annotations map[string]string
			}
		} `json:"object"`
	}
	type event struct {
		Type   string
		Object struct {
			Kind              string
			ColumnDefinitions []map[string]any
			Rows              []row
		}
	}
	dec := json.NewDecoder(resp.Body)
	for i, name := range []string{"secret-1", "secret-2"} {
		var ev event
		require.NoError(t, dec.Decode(&ev))
		assert.Equal(t, "ADDED", ev.Type)
		assert.Equal(t, "Table", ev.Object.Kind)
		assert.Equal(t, i == 0, ev.Object.ColumnDefinitions != nil, "the column definitions come with the first event only")
		require.Len(t, ev.Object.Rows, 1)
		assert.Equal(t, name, ev.Object.Rows[0].Object.Metadata.Name)
		assert.Equal(t, []any{name, "Opaque", float64(0)}, ev.Object.Rows[0].Cells[:3])
	}
	var ev event
	require.NoError(t, dec.Decode(&ev))
	assert.Equal(t, "BOOKMARK", ev.Type)
	assert.Equal(t, "Table", ev.Object.Kind)
	require.Len(t, ev.Object.Rows, 1, "the bookmark is a row too")
	b := ev.Object.Rows[0]
	assert.Equal(t, []any{"", "", float64(0), "<unknown>"}, b.Cells)
	assert.Equal(t, "PartialObjectMetadata", b.Object.Kind)
	assert.Equal(t, "true", b.Object.Metadata.Annotations["k8s.io/initial-events-end"])
}
