package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
)

// Answers without a Status get the one client-go would make up.
func TestStatusMadeUpWhenServerSendsNone(t *testing.T) {
	defer leakcheck.Check(t)()
	cases := []struct {
		name        string
		code        int
		contentType string
		body        string
		header      map[string]string
		call        func(rc *ResourceClient) error
		check       func(error) bool
		message     string
		retryAfter  int
	}{
		{
			name: "plain-text 404 on get", code: 404, contentType: "text/plain; charset=utf-8", body: "404 page not found\n",
			call: get, check: IsNotFound,
			message: "the server could not find the requested resource (get configmaps alpha)",
		},
		{
			name: "409 to a POST is AlreadyExists", code: 409, contentType: "text/plain", body: "exists",
			call: create, check: IsAlreadyExists,
			message: "the server reported a conflict (post configmaps alpha)",
		},
		{
			name: "409 to a PUT is Conflict", code: 409, body: "",
			call: update, check: IsConflict,
			message: "the server reported a conflict (put configmaps alpha)",
		},
		{
			name: "502 from a proxy quotes its text", code: 502, contentType: "text/html", body: "<html>bad gateway</html>",
			call: get, check: IsInternalError,
			message: `an error on the server ("<html>bad gateway</html>") has prevented the request from succeeding (get configmaps alpha)`,
		},
		{
			name: "500 with a binary body does not quote it", code: 500, contentType: "application/octet-stream", body: "\x00\x01",
			call: get, check: IsInternalError,
			message: `an error on the server ("unknown") has prevented the request from succeeding (get configmaps alpha)`,
		},
		{
			name: "503 text", code: 503, contentType: "text/plain", body: "try later",
			call: get, check: IsServiceUnavailable,
			message: "the server is currently unable to handle the request (get configmaps alpha)",
		},
		{
			name: "429 with Retry-After", code: 429, contentType: "text/plain", header: map[string]string{"Retry-After": "3"},
			call: get, check: IsTooManyRequests, retryAfter: 3,
			message: "the server has received too many requests and has asked us to try again later (get configmaps alpha)",
		},
		{
			name: "403 keeps the server's words", code: 403, contentType: "text/plain", body: "no watching for you",
			call: list, check: IsForbidden,
			message: "no watching for you (get configmaps)",
		},
		{
			name: "401", code: 401, call: list, check: IsUnauthorized,
			message: "the server has asked for the client to provide credentials (get configmaps)",
		},
		{
			name: "JSON that is not a Status", code: 404, contentType: "application/json", body: `{"kind":"ConfigMap"}`,
			call: get, check: IsNotFound,
			message: "the server could not find the requested resource (get configmaps alpha)",
		},
		{
			name: "a Success Status with an error code is not trusted", code: 500, contentType: "application/json",
			body: `{"kind":"Status","apiVersion":"v1","status":"Success"}`, call: get, check: IsInternalError,
			message: `an error on the server ("unknown") has prevented the request from succeeding (get configmaps alpha)`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				} else {
					w.Header()["Content-Type"] = nil
				}
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			err := tc.call(newTestClient(t, srv, TransportHTTP).Resource(configMaps).Namespace("ns"))
			require.Error(t, err)
			assert.True(t, tc.check(err), "%v", err)
			st, ok := api.StatusOf(err)
			require.True(t, ok)
			assert.Equal(t, tc.message, st.Message)
			assert.EqualValues(t, tc.code, st.Code)
			assert.Equal(t, api.StatusFailure, st.Status)
			assert.Equal(t, api.CauseUnexpectedServerResponse, st.Details.Causes[0].Type)
			got, _ := api.RetryAfterSeconds(err)
			assert.Equal(t, tc.retryAfter, got)
			// Still found through more wrapping.
			assert.True(t, tc.check(fmt.Errorf("syncing: %w", err)))
		})
	}
}

func get(rc *ResourceClient) error {
	_, err := rc.Get(context.Background(), "alpha")
	return err
}

func list(rc *ResourceClient) error {
	_, err := rc.List(context.Background(), api.ListOptions{})
	return err
}

func create(rc *ResourceClient) error {
	_, err := rc.Create(context.Background(), &api.Object{Metadata: api.ObjectMeta{Name: "alpha"}})
	return err
}

func update(rc *ResourceClient) error {
	_, err := rc.Update(context.Background(), &api.Object{Metadata: api.ObjectMeta{Name: "alpha"}})
	return err
}

func TestIsHelpersOnOtherErrors(t *testing.T) {
	for _, err := range []error{nil, errors.New("boom"), context.Canceled} {
		assert.False(t, IsNotFound(err))
		assert.False(t, IsConflict(err))
		assert.False(t, IsResourceExpired(err))
		assert.False(t, IsGone(err))
		assert.False(t, IsTooLargeResourceVersion(err))
		assert.False(t, IsServiceUnavailable(err))
	}
	gone := &StatusError{Status: api.NewGone("old")}
	assert.True(t, IsGone(gone))
	assert.False(t, IsResourceExpired(gone))
	assert.Equal(t, "old", gone.Error())
}
