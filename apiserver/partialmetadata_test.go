package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Accept headers of client-go's metadata client (metadata.go, List and
// Watch): what the garbage collector's informers send for every resource.
var (
	metadataListAccept  = map[string]string{"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"}
	metadataWatchAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
)

// A LIST, a GET and a WATCH asked for metadata only answer with
// PartialObjectMetadata, as kube-apiserver does (handlers/response.go,
// asPartialObjectMetadataList).
func TestPartialObjectMetadata(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	cm := ts.createConfigMap("fixtures2", "alpha", map[string]string{"app": "demo"}, map[string]string{"k": "v"})
	cms := "/api/v1/namespaces/fixtures2/configmaps"

	body := ts.do(req{path: cms, header: metadataListAccept}).mustCode(t, http.StatusOK)
	var l struct {
		Kind, APIVersion string
		Metadata         struct{ ResourceVersion string }
		Items            []map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(body, &l))
	assert.Equal(t, "PartialObjectMetadataList", l.Kind)
	assert.Equal(t, "meta.k8s.io/v1", l.APIVersion)
	assert.NotEmpty(t, l.Metadata.ResourceVersion)
	require.Len(t, l.Items, 1)
	assert.JSONEq(t, `"PartialObjectMetadata"`, string(l.Items[0]["kind"]))
	assert.NotContains(t, l.Items[0], "data", "only metadata")

	one := ts.do(req{path: cms + "/alpha", header: map[string]string{"Accept": metadataWatchAccept}})
	obj := one.object(t)
	assert.Equal(t, "PartialObjectMetadata", obj.Kind)
	assert.Equal(t, cm.Metadata.UID, obj.Metadata.UID)
	assert.Nil(t, obj.Get("data"))
	ts.do(req{path: cms + "/alpha", header: metadataListAccept}).mustCode(t, http.StatusNotAcceptable)

	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL()+cms+"?watch=1&resourceVersion="+strconv.FormatInt(ts.revision(), 10), nil)
	require.NoError(t, err)
	hr.Header.Set("Accept", metadataWatchAccept)
	resp, err := ts.client.Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ts.createConfigMap("fixtures2", "beta", nil, map[string]string{"k": "v"})
	sc := bufio.NewScanner(resp.Body)
	require.True(t, sc.Scan(), "a watch event: %v", sc.Err())
	var ev struct {
		Type   string
		Object map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
	assert.Equal(t, "ADDED", ev.Type)
	assert.JSONEq(t, `"PartialObjectMetadata"`, string(ev.Object["kind"]))
	assert.NotContains(t, ev.Object, "data")
}
