package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"listwatch/api"
	"listwatch/narrate"
)

// request is one call, before it is sent. It plays the part of client-go's
// rest.Request: a verb, a path, a query and maybe a body.
type request struct {
	method string
	// path is escaped: /api/v1/namespaces/ns/configmaps/a%2Fb.
	path        string
	query       url.Values
	body        []byte
	contentType string
	// gr and name say what the request is about, for the message of an
	// error the server did not explain.
	gr   api.GroupResource
	name string
}

// url is the absolute URL of r on the client's server. r.path is already
// escaped (a name may hold a "/", which must travel as %2F), so it goes
// into RawPath, and Path gets its unescaped form.
func (c *Client) url(r *request) *url.URL {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + r.path
	if p, err := url.PathUnescape(u.RawPath); err == nil {
		u.Path = p
	}
	u.RawQuery = r.query.Encode()
	return &u
}

// newHTTPRequest builds the http.Request with the headers every call
// carries: Accept JSON, our User-Agent and the bearer token.
func (c *Client) newHTTPRequest(ctx context.Context, r *request) (*http.Request, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.url(r).String(), body)
	if err != nil {
		return nil, fmt.Errorf("client: building %s %s: %w", r.method, r.path, err)
	}
	c.setHeaders(req.Header)
	if r.body != nil {
		req.Header.Set("Content-Type", r.contentType)
	}
	return req, nil
}

func (c *Client) setHeaders(h http.Header) {
	h.Set("Accept", "application/json")
	h.Set("User-Agent", c.userAgent)
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
}

// send makes the call and returns the response of a 2xx answer with its
// body still open; any other answer is read, closed and returned as a
// *StatusError. This is the common part of rest.Request.Do and
// rest.Request.Watch.
func (c *Client) send(ctx context.Context, r *request) (*http.Response, error) {
	req, err := c.newHTTPRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	resp, err := c.httpClient.Do(req)
	if err != nil {
		c.tr.Printf(narrate.HTTP, "%s %s: %v", r.method, req.URL.RequestURI(), err)
		return nil, err
	}
	if c.tr.Enabled() {
		c.tr.Printf(narrate.HTTP, "%s %s → %d", r.method, req.URL.RequestURI(), resp.StatusCode)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	if err != nil {
		// The code alone still says what went wrong.
		body = nil
	}
	return nil, statusFromResponse(resp, body, r.method, r.gr, r.name)
}

// do sends r and reads the whole 2xx body.
func (c *Client) do(ctx context.Context, r *request) ([]byte, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("client: reading the answer to %s %s: %w", r.method, r.path, err)
	}
	return body, nil
}

// doObject sends r and decodes the answer as one object.
func (c *Client) doObject(ctx context.Context, r *request) (*api.Object, error) {
	body, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	obj := &api.Object{}
	if err := obj.UnmarshalJSON(body); err != nil {
		return nil, fmt.Errorf("client: decoding the answer to %s %s: %w", r.method, r.path, err)
	}
	return obj, nil
}
