package target

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"listwatch/apiserver"
)

// Faults are the fault switches a demo program pulls itself. On a shared
// server every switch acts on the whole server: a kill ends every
// attendee's watches, as a real network fault would.
type Faults interface {
	// KillWatchConnections drops every open watch connection (tcpkill)
	// and says how many it dropped.
	KillWatchConnections(ctx context.Context) (int, error)
	// CompactNow compacts the history and returns the revision compacted.
	CompactNow(ctx context.Context) (int64, error)
	// SetWatchTimeout makes watches without timeoutSeconds end after d (0
	// restores the server's own).
	SetWatchTimeout(ctx context.Context, d time.Duration) error
}

// localFaults calls the in-process server's switches.
type localFaults struct{ srv *apiserver.Server }

func (f localFaults) KillWatchConnections(context.Context) (int, error) {
	return f.srv.Faults().KillWatchConnections(), nil
}

func (f localFaults) CompactNow(context.Context) (int64, error) {
	return f.srv.Faults().CompactNow(), nil
}

func (f localFaults) SetWatchTimeout(_ context.Context, d time.Duration) error {
	f.srv.Faults().SetWatchTimeout(d)
	return nil
}

// httpFaults POSTs to a shared server's /faults/ endpoints, as the
// workshop's curl commands do.
type httpFaults struct{ url, token string }

func (f httpFaults) KillWatchConnections(ctx context.Context) (int, error) {
	var out struct {
		Killed int `json:"killed"`
	}
	err := f.post(ctx, "kill-watches", nil, &out)
	return out.Killed, err
}

func (f httpFaults) CompactNow(ctx context.Context) (int64, error) {
	var out struct {
		CompactedRevision int64 `json:"compactedRevision"`
	}
	err := f.post(ctx, "compact", nil, &out)
	return out.CompactedRevision, err
}

func (f httpFaults) SetWatchTimeout(ctx context.Context, d time.Duration) error {
	return f.post(ctx, "watch-timeout", url.Values{"duration": {d.String()}}, nil)
}

// post sends POST /faults/<name>?<query> and decodes the JSON answer into
// out (if not nil).
func (f httpFaults) post(ctx context.Context, name string, query url.Values, out any) error {
	u := f.url + "/faults/" + name
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("target: POST %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("target: POST %s: 404: start the server with --enable-faults", u)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("target: POST %s: %s", u, resp.Status)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("target: POST %s: %w", u, err)
	}
	return nil
}
