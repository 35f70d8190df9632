package client

import (
	"context"
	"net/http"

	"listwatch/api"
	"listwatch/narrate"
)

// Watch opens a watch on the collection: GET ...?watch=true plus opts
// (resourceVersion, allowWatchBookmarks, timeoutSeconds, selectors). It
// returns once the server has accepted the watch (200, or 101 for a
// websocket); a refusal (a 500 for a malformed resourceVersion, say) is a
// *StatusError like any other call's. What goes wrong later (410 Expired
// for a resourceVersion that is too old, for instance) arrives in the
// stream as an ERROR event, because the server has already said 200 by
// then; see the fixtures watch-410-too-old-rv.jsonl.
//
// The watch lives until the server ends it, ctx is cancelled, or Stop is
// called; then ResultChan closes. This is client-go's rest.Request.Watch.
func (rc *ResourceClient) Watch(ctx context.Context, opts api.ListOptions) (Watcher, error) {
	if err := rc.check(); err != nil {
		return nil, err
	}
	opts.Watch = true
	r := &request{
		method: http.MethodGet, path: rc.collectionPath(), query: opts.Values(),
		gr: rc.gvr.GroupResource(),
	}
	if rc.c.transport == TransportWebSocket {
		return rc.c.watchWebSocket(ctx, r)
	}
	return rc.c.watchHTTP(ctx, r)
}

// watchHTTP streams the watch as one chunked HTTP response.
func (c *Client) watchHTTP(ctx context.Context, r *request) (Watcher, error) {
	// The request gets its own context so that Stop can cancel it: that
	// is what reliably unblocks a Read waiting on a silent connection.
	ctx, cancel := context.WithCancel(ctx)
	resp, err := c.send(ctx, r)
	if err != nil {
		cancel()
		return nil, err
	}
	if c.tr.Enabled() {
		c.tr.Printf(narrate.StreamWatcher, "watch open (http) %s", resp.Request.URL.RequestURI())
	}
	body := newWatchBody(resp.Body, func() error {
		cancel()
		return resp.Body.Close()
	}, c.idle, c.clock, c.tr)
	return NewStreamWatcher(body, c.tr), nil
}
