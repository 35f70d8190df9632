package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Kubernetes' e2e "Servers with support for API chunking" specs
// (test/e2e/apimachinery/chunking.go) create 400 PodTemplates and page
// through them 17 at a time, each page at the first page's
// resourceVersion, with remainingItemCount until the last. Ours serves
// PodTemplates as the reference does: generation 1 on create, grown by a
// change of template only.
func TestPodTemplatesPageAsTheChunkingSpecsExpect(t *testing.T) {
	ts := startServer(t, Config{})
	const n = 40
	for i := range n {
		body := fmt.Sprintf(`{"metadata":{"name":"template-%04d"},"template":{"spec":{"containers":[{"name":"test","image":"test2"}]}}}`, i)
		created := ts.do(req{method: "POST", path: "/api/v1/namespaces/default/podtemplates", body: body}).mustCode(t, http.StatusCreated)
		var obj struct{ Metadata struct{ Generation int64 } }
		require.NoError(t, json.Unmarshal(created, &obj))
		require.Equal(t, int64(1), obj.Metadata.Generation)
	}
	found, rv, cont := 0, "", ""
	for {
		list := ts.get("/api/v1/namespaces/default/podtemplates?limit=17&continue=" + url.QueryEscape(cont)).list(t)
		require.LessOrEqual(t, len(list.Items), 17)
		if rv == "" {
			rv = list.Metadata.ResourceVersion
		}
		require.Equal(t, rv, list.Metadata.ResourceVersion, "every page is read at the first page's resourceVersion")
		for _, item := range list.Items {
			require.Equal(t, fmt.Sprintf("template-%04d", found), item.Metadata.Name)
			found++
		}
		cont = list.Metadata.Continue
		if cont == "" {
			assert.Nil(t, list.Metadata.RemainingItemCount)
			break
		}
		require.NotNil(t, list.Metadata.RemainingItemCount)
		require.Equal(t, int64(n-found), *list.Metadata.RemainingItemCount)
	}
	require.Equal(t, n, found)

	// The template is what counts as its spec.
	path := "/api/v1/namespaces/default/podtemplates/template-0000"
	patched := ts.do(req{method: "PATCH", path: path, body: `{"metadata":{"labels":{"a":"b"}}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}}).object(t)
	assert.Equal(t, int64(1), patched.Metadata.Generation, "a label is no change of template")
	patched = ts.do(req{method: "PATCH", path: path, body: `{"template":{"metadata":{"labels":{"b":"2","a":"1"}}}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}}).object(t)
	assert.Equal(t, int64(2), patched.Metadata.Generation)
}

// The Table of PodTemplates is printPodTemplate's, as the reference
// answers it: Name, Containers, Images, Pod Labels and no Age.
func TestPodTemplateTable(t *testing.T) {
	ts := startServer(t, Config{})
	ts.do(req{method: "POST", path: "/api/v1/namespaces/default/podtemplates",
		body: `{"metadata":{"name":"template-0001"},"template":{"metadata":{"labels":{"b":"2","a":"1"}},"spec":{"containers":[{"name":"test","image":"test2"},{"name":"x","image":"y"}]}}}`,
	}).mustCode(t, http.StatusCreated)
	body := ts.do(req{path: "/api/v1/namespaces/default/podtemplates", header: kubectlGetAccept}).mustCode(t, http.StatusOK)
	var tbl tableJSON
	require.NoError(t, json.Unmarshal(body, &tbl))
	var names []any
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c["name"])
	}
	assert.Equal(t, []any{"Name", "Containers", "Images", "Pod Labels"}, names)
	assert.Equal(t, "The labels for the pod template.", tbl.ColumnDefinitions[3]["description"])
	require.Len(t, tbl.Rows, 1)
	assert.Equal(t, []any{"template-0001", "test,x", "test2,y", "a=1,b=2"}, tbl.Rows[0].Cells)
}
