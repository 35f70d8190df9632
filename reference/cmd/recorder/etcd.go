package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// compactEtcd compacts etcd to its current revision through etcd's JSON
// gateway (/v3/maintenance/status, /v3/kv/compaction on the client URL),
// the same compaction kube-apiserver's compactor issues over gRPC
// (apiserver storage/etcd3/compact.go), only now instead of in five
// minutes. It returns the revision compacted to.
func compactEtcd(ctx context.Context, etcdURL string) (int64, error) {
	var status struct {
		Header struct {
			Revision int64 `json:"revision,string"`
		} `json:"header"`
	}
	if err := etcdPost(ctx, etcdURL+"/v3/maintenance/status", `{}`, &status); err != nil {
		return 0, err
	}
	rev := status.Header.Revision
	body := fmt.Sprintf(`{"revision":"%d","physical":true}`, rev)
	if err := etcdPost(ctx, etcdURL+"/v3/kv/compaction", body, nil); err != nil {
		return 0, err
	}
	return rev, nil
}

func etcdPost(ctx context.Context, url, body string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		return fmt.Errorf("etcd request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s %s", url, resp.Status, data)
	}
	if into == nil {
		return nil
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	return nil
}
