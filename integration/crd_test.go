package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/internal/fixtures"
	"listwatch/internal/leakcheck"
)

var (
	crdsGVR    = api.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgetsGVR = api.GroupVersionResource{Group: "fixtures.example.com", Version: "v1", Resource: "widgets"}
)

// widgetsCRD is the definition the real server was recorded with: its
// request body, from the fixtures README (crd-create-201.json).
const widgetsCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.fixtures.example.com"},"spec":{"group":"fixtures.example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wg"]},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"color":{"type":"string"},"size":{"type":"integer"}}},"status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}},"subresources":{"status":{}},"additionalPrinterColumns":[{"name":"Color","type":"string","jsonPath":".spec.color"}]}]}}`

func decodeObject(t *testing.T, s string) *api.Object {
	t.Helper()
	o := &api.Object{}
	require.NoError(t, o.UnmarshalJSON([]byte(s)))
	return o
}

func getBody(t *testing.T, url, accept string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// waitEstablished watches definition crd from its resourceVersion until
// its Established condition is True, and checks the conditions it passes
// through on the way: the names accepted with Established False
// (Installing), then Established True, as kube-apiserver 1.37.2's naming
// and establishing controllers write them.
func waitEstablished(ctx context.Context, t *testing.T, c *client.Client, crd *api.Object) {
	t.Helper()
	w, err := c.Resource(crdsGVR).Watch(ctx, api.ListOptions{ResourceVersion: crd.Metadata.ResourceVersion,
		FieldSelector: "metadata.name=" + crd.Metadata.Name})
	require.NoError(t, err)
	defer w.Stop()
	type cond struct{ Type, Status, Reason, Message string }
	var seen [][]cond
	for {
		select {
		case <-ctx.Done():
			require.FailNow(t, "never established", "conditions seen: %v", seen)
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "the watch ended; conditions seen: %v", seen)
			require.Equal(t, api.Modified, ev.Type)
			var st struct{ Conditions []cond }
			require.NoError(t, json.Unmarshal(ev.Object.Get("status"), &st))
			seen = append(seen, st.Conditions)
			if len(st.Conditions) == 2 && st.Conditions[1].Status == "True" {
				assert.Equal(t, [][]cond{
					{{"NamesAccepted", "True", "NoConflicts", "no conflicts found"}, {"Established", "False", "Installing", "the initial names have been accepted"}},
					{{"NamesAccepted", "True", "NoConflicts", "no conflicts found"}, {"Established", "True", "InitialNamesAccepted", "the initial names have been accepted"}},
				}, seen)
				return
			}
		}
	}
}

func TestCustomResourceDefinitionServesItsResource(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	ctx := testContext(t)

	crd, err := c.Resource(crdsGVR).Create(ctx, decodeObject(t, widgetsCRD))
	require.NoError(t, err)
	// Not yet established in the answer, as recorded: no conditions,
	// empty names, the storage version stored.
	var created struct {
		Status json.RawMessage `json:"status"`
	}
	require.NoError(t, json.Unmarshal(fixtures.Read(t, "crd-create-201.json"), &created))
	assert.JSONEq(t, string(created.Status), string(crd.Get("status")))
	assert.Contains(t, string(crd.Get("spec")), `"listKind":"WidgetList"`, "defaulted")

	// Established asynchronously, as on a real server: a client waits for
	// the condition (kubectl wait --for condition=established), and then
	// finds the resource in discovery.
	waitEstablished(ctx, t, c, crd)
	code, body := getBody(t, srv.URL()+"/apis/fixtures.example.com/v1", "")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"name":"widgets"`)
	assert.Contains(t, body, `"shortNames":["wg"]`)
	_, body = getBody(t, srv.URL()+"/apis", "")
	assert.Contains(t, body, `"name":"fixtures.example.com"`)

	widgets := c.Resource(widgetsGVR).Namespace("default")
	w, err := widgets.Watch(ctx, api.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	// The same watch over a websocket.
	wsClient := newClient(t, srv, client.Config{Transport: client.TransportWebSocket})
	ws, err := wsClient.Resource(widgetsGVR).Namespace("default").Watch(ctx, api.ListOptions{})
	require.NoError(t, err)
	defer ws.Stop()

	// Create: keys sorted as the real server writes custom resources,
	// generation 1; unknown fields pruned.
	w1, err := widgets.Create(ctx, decodeObject(t, `{"apiVersion":"fixtures.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"color":"red","size":3,"extra":"dropped"},"topLevelExtra":true}`))
	require.NoError(t, err)
	assert.Equal(t, int64(1), w1.Metadata.Generation)
	assert.JSONEq(t, `{"color":"red","size":3}`, string(w1.Get("spec")))
	assert.Nil(t, w1.Get("topLevelExtra"), "pruned")
	code, body = getBody(t, srv.URL()+"/apis/fixtures.example.com/v1/namespaces/default/widgets/w1", "")
	require.Equal(t, http.StatusOK, code)
	recorded := fixtures.Read(t, "crd-widget-create-201.json")
	assert.True(t, strings.HasPrefix(body, `{"apiVersion":"fixtures.example.com/v1","kind":"Widget","metadata":{"creationTimestamp":`),
		"alphabetical keys, as in %s: %s", recorded[:60], body)

	// A wrong type: 422, as recorded.
	_, err = widgets.Create(ctx, decodeObject(t, `{"apiVersion":"fixtures.example.com/v1","kind":"Widget","metadata":{"name":"bad"},"spec":{"color":"red","size":"three"}}`))
	require.True(t, client.IsInvalid(err), "%v", err)
	var want api.Status
	require.NoError(t, json.Unmarshal(fixtures.Read(t, "crd-widget-422-wrong-type.json"), &want))
	var got *api.Status
	require.ErrorAs(t, err, &got)
	assert.Equal(t, want.Message, got.Message)
	assert.Equal(t, want.Details.Causes, got.Details.Causes)

	// Merge patch bumps the generation; a status change through the
	// object is ignored (status is a subresource here).
	p, err := widgets.Patch(ctx, "w1", client.PatchTypeMerge, []byte(`{"spec":{"size":5},"status":{"ready":true}}`))
	require.NoError(t, err)
	assert.Equal(t, int64(2), p.Metadata.Generation)
	assert.Nil(t, p.Get("status"))
	_, err = widgets.Patch(ctx, "w1", client.PatchTypeJSON, []byte(`[{"op":"replace","path":"/spec/color","value":"blue"}]`))
	require.NoError(t, err)
	// The status subresource changes status only (crd-widget-patch-status-200.json).
	patchStatus, err := http.NewRequest(http.MethodPatch, srv.URL()+"/apis/fixtures.example.com/v1/namespaces/default/widgets/w1/status",
		strings.NewReader(`{"status":{"ready":true},"spec":{"size":99}}`))
	require.NoError(t, err)
	patchStatus.Header.Set("Content-Type", "application/merge-patch+json")
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(patchStatus)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	st1, err := widgets.Get(ctx, "w1")
	require.NoError(t, err)
	assert.JSONEq(t, `{"ready":true}`, string(st1.Get("status")))
	assert.JSONEq(t, `{"color":"blue","size":5}`, string(st1.Get("spec")), "spec is not written through /status")
	assert.Equal(t, int64(3), st1.Metadata.Generation, "two spec changes, then a status change that does not count")
	_, err = widgets.UpdateStatus(ctx, decodeObject(t, `{"apiVersion":"fixtures.example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"default"},"status":{"ready":"yes"}}`))
	assert.True(t, client.IsInvalid(err), "status is validated against the schema too: %v", err)

	// Printer columns: Name and Color, no Age.
	_, body = getBody(t, srv.URL()+"/apis/fixtures.example.com/v1/namespaces/default/widgets", "application/json;as=Table;v=v1;g=meta.k8s.io")
	assert.Contains(t, body, `"description":"Custom resource definition column (in JSONPath format): .spec.color"`)
	assert.Contains(t, body, `"cells":["w1","blue"]`)
	assert.NotContains(t, body, `"name":"Age"`)

	_, err = widgets.Create(ctx, decodeObject(t, `{"apiVersion":"fixtures.example.com/v1","kind":"Widget","metadata":{"name":"w2"},"spec":{"color":"green"}}`))
	require.NoError(t, err)

	// Deleting the definition: the open watch sees one DELETED per
	// object, then its end; the resource is gone from the API.
	require.NoError(t, c.Resource(crdsGVR).Delete(ctx, "widgets.fixtures.example.com", client.DeleteOptions{}))
	var seen []string
	for ev := range w.ResultChan() {
		seen = append(seen, string(ev.Type)+" "+ev.Object.Metadata.Name)
	}
	require.GreaterOrEqual(t, len(seen), 2)
	assert.Equal(t, []string{"DELETED w1", "DELETED w2"}, seen[len(seen)-2:], "every event: %v", seen)
	var seenWS []string
	for ev := range ws.ResultChan() {
		seenWS = append(seenWS, string(ev.Type)+" "+ev.Object.Metadata.Name)
	}
	assert.Equal(t, seen, seenWS, "the websocket watch sees the same events, then its end")
	code, body = getBody(t, srv.URL()+"/apis/fixtures.example.com/v1/namespaces/default/widgets", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, string(fixtures.Read(t, "crd-deleted-widgets-list-404.txt")), body)
	_, body = getBody(t, srv.URL()+"/apis", "")
	assert.NotContains(t, body, "fixtures.example.com")
}

func TestCustomResourceDefinitionValidation(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	ctx := context.Background()
	for name, body := range map[string]string{
		"name is not plural.group": strings.Replace(widgetsCRD, `"name":"widgets.fixtures.example.com"`, `"name":"gadgets.fixtures.example.com"`, 1),
		"no storage version":       strings.Replace(widgetsCRD, `"storage":true`, `"storage":false`, 1),
		"bad scope":                strings.Replace(widgetsCRD, `"scope":"Namespaced"`, `"scope":"Galaxy"`, 1),
		"bad schema type":          strings.Replace(widgetsCRD, `"type":"integer"`, `"type":"int"`, 1),
		"shadows a built-in":       strings.NewReplacer(`widgets.fixtures.example.com`, `deployments.apps`, `"group":"fixtures.example.com"`, `"group":"apps"`, `"plural":"widgets"`, `"plural":"deployments"`).Replace(widgetsCRD),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Resource(crdsGVR).Create(ctx, decodeObject(t, body))
			assert.True(t, client.IsInvalid(err), "%v", err)
		})
	}
}
