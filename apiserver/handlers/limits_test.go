package handlers

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestWatchTimeoutIsClampedNeverOverflows(t *testing.T) {
	tests := []struct {
		query string
		want  time.Duration
	}{
		{"", 0},
		{"timeoutSeconds=0", 0},
		{"timeoutSeconds=5", 5 * time.Second},
		{"timeoutSeconds=3600", time.Hour},
		{"timeoutSeconds=3601", MaxWatchTimeout},
		// These once overflowed (a watch that never ended)
		// and wrapped (one that ended after 0.3 s).
		{"timeoutSeconds=9223372037", MaxWatchTimeout},
		{"timeoutSeconds=18446744074", MaxWatchTimeout},
		{"timeoutSeconds=9223372036854775807", MaxWatchTimeout},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		require.NoError(t, err)
		p, err := parseListParams(q, true, "")
		require.NoError(t, err, tt.query)
		got := watchTimeout(p.timeoutSeconds)
		assert.Equal(t, tt.want, got, tt.query)
		assert.GreaterOrEqual(t, got, time.Duration(0), tt.query)
	}
}

// 50 watches with 400 KB selectors of 57k terms once
// slowed every other watcher from 0.2 ms to 3.5 s. Such selectors are now
// refused, with a message saying which limit.
func TestOversizedSelectorsAre400(t *testing.T) {
	terms := func(n int) string {
		s := "a=b"
		for i := 1; i < n; i++ {
			s += ",k" + string(rune('a'+i%26)) + "=v"
		}
		return s
	}
	huge := strings.Repeat("key-with-some-length=value,", (400<<10)/len("key-with-some-length=value,")+1)
	tests := []struct {
		query, message string
	}{
		{"labelSelector=" + url.QueryEscape(huge+"a=b"), "labelSelector: Too long"},
		{"fieldSelector=" + url.QueryEscape("metadata.name="+huge[:40<<10]), "fieldSelector: Too long"},
		{"labelSelector=" + url.QueryEscape(terms(300)), "labelSelector: Too many: 300 requirements"},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		require.NoError(t, err)
		_, err = parseListParams(q, true, "")
		var st *api.Status
		require.ErrorAs(t, err, &st)
		assert.Equal(t, int32(400), st.Code)
		assert.Contains(t, st.Message, tt.message)
	}
}
