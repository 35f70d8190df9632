package watchserver

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// recordingWriter is a transport's writer that keeps what it is given and
// checks, at every write, that the gzip writer in front of it holds no
// compressor: every one made is idle.
type recordingWriter struct {
	t     *testing.T
	pool  *compressors
	ctx   context.Context
	bytes bytes.Buffer
	lens  []int
}

func (r *recordingWriter) label() string           { return "" }
func (r *recordingWriter) client() context.Context { return r.ctx }
func (r *recordingWriter) endsWith() string        { return "" }
func (r *recordingWriter) end()                    {}
func (r *recordingWriter) drop()                   {}
func (r *recordingWriter) release()                {}
func (r *recordingWriter) write(frames [][]byte, _ func() bool) (int, error) {
	assert.Equal(r.t, len(r.pool.seats), len(r.pool.free), "a compressor is held while the transport writes")
	n := 0
	for _, f := range frames {
		r.bytes.Write(f)
		r.lens = append(r.lens, len(f))
		n += len(f)
	}
	return n, nil
}

// A big write is compressed in members of about maxMemberBytes of frames
// each, handed on whole once ended, and the whole is the frames again.
func TestGzipMembersAreBoundedAndHandedOnWhole(t *testing.T) {
	pool := newCompressors(1)
	rec := &recordingWriter{t: t, pool: pool, ctx: context.Background()}
	g := &gzipWriter{writer: rec, pool: pool}
	var frames [][]byte
	var want bytes.Buffer
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 { // 200 frames of about 2 KiB, 400 KiB in all
		f := make([]byte, 2000)
		for j := range f {
			f[j] = 'a' + byte(rng.IntN(26))
		}
		f = append(fmt.Appendf(nil, "%d ", i), f...)
		frames = append(frames, append(f, '\n'))
		want.Write(frames[i])
	}
	_, err := g.write(frames, func() bool { return false })
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(rec.lens), 400<<10/maxMemberBytes, "members of at most about maxMemberBytes")
	for _, n := range rec.lens {
		assert.Less(t, n, maxMemberBytes+4<<10, "a member's compressed size")
	}
	zr, err := gzip.NewReader(&rec.bytes)
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, want.Bytes(), got)
	assert.Len(t, pool.free, 1, "the compressor is back")
}

// At most n compressors exist: the next one asked for waits for one to be
// given back, or for its context to end.
func TestCompressorsAreBounded(t *testing.T) {
	pool := newCompressors(2)
	a, err := pool.get(context.Background())
	require.NoError(t, err)
	b, err := pool.get(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = pool.get(ctx)
	require.ErrorIs(t, err, context.Canceled)
	pool.put(a)
	c, err := pool.get(context.Background())
	require.NoError(t, err)
	assert.Same(t, a, c, "the idle one is reused")
	pool.put(b)
	pool.put(c)
	assert.Len(t, pool.free, 2)
}
