package watchserver

import (
	"compress/gzip"
	"context"
	"net/http"
	"strings"

	"listwatch/apiserver/cacher"
)

// Watch-list compression. kube-apiserver 1.37 (feature WatchListCompression,
// beta and on by default) compresses the response to a watch-list request,
// a watch with sendInitialEvents=true and allowWatchBookmarks=true, when
// the client's Accept-Encoding lists gzip: the initial events are a whole
// list's worth of objects, and a list of that size would be compressed
// too. Go's HTTP transport sends Accept-Encoding: gzip on its own (and then
// decompresses on its own), so every client-go informer, and ours, gets
// compressed watch-lists. Plain watches, websocket watches and a
// sendInitialEvents watch without bookmarks are not compressed.
//
// The body is a sequence of complete gzip members, one per flush in
// Kubernetes: a member ends, and goes out, whenever the watcher has
// nothing more ready, so a client decompresses every event as soon as it
// arrives instead of waiting for a buffer to fill. Each later event is
// typically one member. Ours also ends a member every 64 KiB of frames
// and at the end of every write (maxMemberBytes, below, says why), so a
// big watch-list's initial events are many members. A gzip reader reads
// concatenated members as one stream (RFC 1952; Go's gzip.Reader is
// multistream by default). The member is flushed before it is closed, so
// a streaming decoder returns its data before it looks for the next
// member's header.
//
// Kubernetes: endpoints/handlers/watch.go (watchResponseWriter.BeginStream,
// perFlushGzipWriter, HandleHTTP's flushes) and
// endpoints/handlers/responsewriters/compression.go
// (ContentEncodingSupported); handlers/get.go isListWatchRequest.

// wantsGzip reports whether a watch's response is gzip-compressed: a
// watch-list request (not over a websocket) whose Accept-Encoding has the
// token gzip, exactly as ContentEncodingSupported reads it (no quality
// values: "gzip;q=1" is not "gzip").
func wantsGzip(r *http.Request, opts cacher.WatchOptions, transport string) bool {
	if transport == TransportH1Websocket || !opts.AllowBookmarks ||
		opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
		return false
	}
	for tok := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(tok) == "gzip" {
			return true
		}
	}
	return false
}

// setGzipHeaders adds the headers of a compressed watch.
func setGzipHeaders(h http.Header) {
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
}

// compressors are the gzip writers a Server's watch-lists share: at most
// n exist (one per CPU Go uses), each made the first time every existing
// one is busy, and kept. A watch takes one for a member and gives it back when the member
// ends; when all are busy it waits, which costs nothing, since compressing
// keeps a core busy and there are no more cores than compressors. Level 1,
// kube-apiserver's gzipContentEncodingLevel: the least CPU for nearly the
// same size.
//
// Ours, not Kubernetes': kube-apiserver takes its writers from a sync.Pool
// (endpoints/handlers/watch.go watchGzipPool), which makes a new one
// whenever the pool is empty, however many exist, and keeps them until
// the garbage collector drops the pool's contents. A hundred watch-lists
// starting at once each made one here too, and the pool held them all:
// 41 MB of compressors in a heap profile of the sync storm
// (docs/performance-watchlist.md).
type compressors struct {
	free  chan *gzip.Writer // idle compressors
	seats chan struct{}     // one for each compressor made
}

// newCompressors returns a set of at most n compressors (at least one).
func newCompressors(n int) *compressors {
	n = max(n, 1)
	return &compressors{free: make(chan *gzip.Writer, n), seats: make(chan struct{}, n)}
}

// get returns an idle compressor, a new one while fewer than n exist,
// or waits for one to be given back until ctx ends.
func (c *compressors) get(ctx context.Context) (*gzip.Writer, error) {
	select {
	case zw := <-c.free:
		return zw, nil
	default:
	}
	select {
	case zw := <-c.free:
		return zw, nil
	case c.seats <- struct{}{}:
		zw, err := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		if err != nil {
			panic(err) // only for an invalid level
		}
		return zw, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// put gives a compressor back. It never blocks: no more than n exist.
func (c *compressors) put(zw *gzip.Writer) {
	zw.Reset(nil)
	c.free <- zw
}

// Members bounded in size: ours, not Kubernetes'. A compressor holds about
// 600 KiB (flate's window, hash table and tokens at level 1), and a member
// holds one from its first byte to its end. Kubernetes ends a member only
// at a flush, which its watch handler does when the watcher's result
// channel is empty (endpoints/handlers/watch.go HandleHTTP,
// perFlushGzipWriter.Flush): while a watch-list sends its initial events
// the channel is seldom empty, so each watch-list holds a compressor for
// most of its initial events, and a hundred informers starting at once
// hold a hundred (docs/performance-watchlist.md measured 73 MiB here
// before this rule). We also end a member once it has taken
// maxMemberBytes of frames, and at the end of every write, and hand its
// bytes to the transport only once it has ended: a compressor is held
// only while it compresses, never while the transport waits for a slow
// client, so a few serve every watch. The stream is still a series of
// complete members, which every gzip reader reads as one; the cost is a
// member's 18 bytes of header and trailer per 64 KiB.
const maxMemberBytes = maxBatchBytes

// gzipWriter compresses a watch's frames and hands the compressed bytes to
// the transport's writer, which frames them as it would frames: each
// member whole once it has ended, with the watcher's own "more" after the
// last, so the transport flushes when the write is over and nothing more
// is ready.
type gzipWriter struct {
	writer              // the transport's writer
	pool   *compressors // where zw comes from and goes back to
	zw     *gzip.Writer // the open member's, nil between members
	in     int          // bytes of frames the open member has taken
	out    []byte       // compressed bytes not yet handed on (pooled)
	err    error        // the transport's first write error
}

func (g *gzipWriter) label() string { return g.writer.label() + " (gzip)" }

// write compresses frames into members of at most about maxMemberBytes
// each, and ends the last when the write is over.
func (g *gzipWriter) write(frames [][]byte, more func() bool) (int, error) {
	n := 0
	for i, f := range frames {
		if g.zw == nil {
			zw, err := g.pool.get(g.client())
			if err != nil {
				g.discard()
				return n, err
			}
			g.zw, g.in = zw, 0
			g.zw.Reset(g)
		}
		m, err := g.zw.Write(f)
		n += m
		g.in += m
		if err != nil {
			g.discard()
			return n, err
		}
		if g.in >= maxMemberBytes && i < len(frames)-1 {
			if err := g.endMember(alwaysMore); err != nil {
				return n, err
			}
		}
	}
	if g.zw == nil {
		return n, g.err
	}
	return n, g.endMember(more)
}

// alwaysMore tells the transport that more follows: a member that ended
// within a write.
func alwaysMore() bool { return true }

// Write is the open member's output: it collects the compressed bytes,
// which endMember hands on.
func (g *gzipWriter) Write(p []byte) (int, error) {
	if g.out == nil {
		g.out = (*batchPool.Get().(*[]byte))[:0]
	}
	g.out = append(g.out, p...)
	return len(p), nil
}

// pass hands the collected bytes to the transport.
func (g *gzipWriter) pass(more func() bool) {
	if len(g.out) > 0 && g.err == nil {
		_, g.err = g.writer.write([][]byte{g.out}, more)
	}
	g.out = g.out[:0]
}

// endMember flushes the member (so a streaming reader gets its data before
// the member's end) and closes it (the gzip trailer); the compressor goes
// back to its pool before the member is handed on, and the buffer after.
func (g *gzipWriter) endMember(more func() bool) error {
	err := g.zw.Flush()
	if err == nil {
		err = g.zw.Close()
	}
	g.releaseCompressor()
	if err == nil {
		g.pass(more)
		err = g.err
	}
	g.discard()
	return err
}

// discard gives the compressor and the buffer back, whatever state the
// member is in.
func (g *gzipWriter) discard() {
	g.releaseCompressor()
	if g.out != nil {
		out := g.out[:0]
		batchPool.Put(&out)
		g.out = nil
	}
}

// releaseCompressor gives the compressor back, if one is held.
func (g *gzipWriter) releaseCompressor() {
	if g.zw != nil {
		g.pool.put(g.zw)
		g.zw = nil
	}
}

// end ends the open member, if any, then the stream.
func (g *gzipWriter) end() {
	if g.zw != nil {
		_ = g.endMember(func() bool { return false })
	}
	g.writer.end()
}

func (g *gzipWriter) drop()    { g.discard(); g.writer.drop() }
func (g *gzipWriter) release() { g.discard(); g.writer.release() }
