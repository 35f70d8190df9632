package watchserver

import (
	"compress/gzip"
	"net/http"
	"strings"
	"sync"

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
// The body is a sequence of complete gzip members, one per flush: a member
// ends, and goes out, whenever the watcher has nothing more ready, so a
// client decompresses every event as soon as it arrives instead of waiting
// for a buffer to fill. Typically the initial events and the
// initial-events-end bookmark are one member and each later event one
// more. A gzip reader reads concatenated members as one stream (RFC 1952;
// Go's gzip.Reader is multistream by default). The member is flushed
// before it is closed, so a streaming decoder returns its data before it
// looks for the next member's header.
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

// gzipPool holds the compressors of the members being written, shared by
// all watches: a watch holds one only while a member is open, so an idle
// watch holds none (as Kubernetes returns its writer to a pool at each
// flush). Level 1, kube-apiserver's gzipContentEncodingLevel: the least
// CPU for nearly the same size.
var gzipPool = sync.Pool{New: func() any {
	zw, err := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	if err != nil {
		panic(err) // only for an invalid level
	}
	return zw
}}

// gzipWriter compresses a watch's frames and hands the compressed bytes to
// the transport's writer, which frames them as it would frames: in chunks
// of up to maxBatchBytes while a member is open, and the member's last
// bytes with the watcher's own "more", so the transport flushes when the
// member ends.
type gzipWriter struct {
	writer              // the transport's writer
	zw     *gzip.Writer // the open member's, nil between members
	out    []byte       // compressed bytes not yet handed on (pooled)
	err    error        // the transport's first write error
}

func (g *gzipWriter) label() string { return g.writer.label() + " (gzip)" }

// write compresses frames into the open member (opening one if needed)
// and ends the member when the watcher has nothing more ready.
func (g *gzipWriter) write(frames [][]byte, more func() bool) (int, error) {
	if g.zw == nil {
		g.zw = gzipPool.Get().(*gzip.Writer)
		g.zw.Reset(g)
	}
	n := 0
	for _, f := range frames {
		m, err := g.zw.Write(f)
		n += m
		if err == nil {
			err = g.err
		}
		if err != nil {
			g.discard()
			return n, err
		}
	}
	if more() {
		return n, nil
	}
	return n, g.endMember(more)
}

// Write is the open member's output: it collects the compressed bytes and
// passes them on in batches of maxBatchBytes, telling the transport more
// is coming (the member is not over).
func (g *gzipWriter) Write(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.out == nil {
		g.out = (*batchPool.Get().(*[]byte))[:0]
	}
	g.out = append(g.out, p...)
	if len(g.out) >= maxBatchBytes {
		g.pass(func() bool { return true })
	}
	return len(p), g.err
}

// pass hands the collected bytes to the transport.
func (g *gzipWriter) pass(more func() bool) {
	if len(g.out) > 0 && g.err == nil {
		_, g.err = g.writer.write([][]byte{g.out}, more)
	}
	g.out = g.out[:0]
}

// endMember flushes the member (so a streaming reader gets its data before
// the member's end), closes it (the gzip trailer) and hands it on; the
// compressor and the buffer go back to their pools.
func (g *gzipWriter) endMember(more func() bool) error {
	err := g.zw.Flush()
	if err == nil {
		err = g.zw.Close()
	}
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
	if g.zw != nil {
		g.zw.Reset(nil)
		gzipPool.Put(g.zw)
		g.zw = nil
	}
	if g.out != nil {
		out := g.out[:0]
		batchPool.Put(&out)
		g.out = nil
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
