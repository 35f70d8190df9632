package watchserver

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"listwatch/apiserver/cacher"
)

// Which watches are compressed: watch-lists from clients accepting gzip,
// never over a websocket (kube-apiserver's HandleWS writes no gzip).
func TestWantsGzip(t *testing.T) {
	yes, no := true, false
	watchList := cacher.WatchOptions{SendInitialEvents: &yes, AllowBookmarks: true}
	cases := []struct {
		name           string
		opts           cacher.WatchOptions
		acceptEncoding string
		transport      string
		want           bool
	}{
		{"watch-list", watchList, "gzip", TransportH1Chunked, true},
		{"over HTTP/2", watchList, "gzip", TransportH2Stream, true},
		{"over HTTP/1.0", watchList, "gzip", TransportH1Stream, true},
		{"spaces and other codings", watchList, "deflate ,  gzip , br", TransportH1Chunked, true},
		{"over a websocket", watchList, "gzip", TransportH1Websocket, false},
		{"not accepted", watchList, "", TransportH1Chunked, false},
		{"a quality value", watchList, "gzip;q=0.5", TransportH1Chunked, false},
		{"x-gzip", watchList, "x-gzip", TransportH1Chunked, false},
		{"no bookmarks", cacher.WatchOptions{SendInitialEvents: &yes}, "gzip", TransportH1Chunked, false},
		{"sendInitialEvents=false", cacher.WatchOptions{SendInitialEvents: &no, AllowBookmarks: true}, "gzip", TransportH1Chunked, false},
		{"a plain watch", cacher.WatchOptions{AllowBookmarks: true}, "gzip", TransportH1Chunked, false},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/api/v1/configmaps?watch=1", nil)
		if c.acceptEncoding != "" {
			r.Header.Set("Accept-Encoding", c.acceptEncoding)
		}
		assert.Equal(t, c.want, wantsGzip(r, c.opts, c.transport), c.name)
	}
}
