package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/websocket"

	"listwatch/api"
	"listwatch/apiserver/faults"
	"listwatch/client"
)

// Layer names of the websocket chapter's lines: the same events, as each
// transport frames them.
const (
	chunkedLayer   = "chunked"
	websocketLayer = "websocket"
)

// overWebsocket is the chapter that watches twice from the same
// resourceVersion, once with chunked HTTP and once over a websocket, and
// prints each event as both transports framed it, side by side, then how
// each stream ends.
func (t *tour) overWebsocket(ctx context.Context) error {
	from := t.lastWatchRV() // the informer's watch started here: demo's ADDED comes after it
	t.chapter(chapterWebsocket(from))
	restore := t.spot.focus(layers(chunkedLayer, websocketLayer))
	defer restore()

	// No timeoutSeconds: the server ends both watches, as at their
	// timeout, once the live change has arrived on both (expireBoth).
	opts := api.ListOptions{ResourceVersion: from}

	// Chunked: our client, over a connection whose reads the wiretap
	// cuts into chunks.
	var mu sync.Mutex
	var chunks []wireEvent
	tap := &wiretap{seen: func(ev wireEvent) {
		mu.Lock()
		chunks = append(chunks, ev)
		mu.Unlock()
	}}
	tr := tap.transport()
	defer tr.CloseIdleConnections()
	c, err := client.New(client.Config{Host: t.srv.URL(), HTTPClient: &http.Client{Transport: tr},
		UserAgent: chunkedAgent + client.Version})
	if err != nil {
		return err
	}
	chunked, err := c.Resource(configMaps).Namespace(namespace).Watch(ctx, opts)
	if err != nil {
		return fmt.Errorf("%s: the chunked watch: %w", t.here(), err)
	}
	defer chunked.Stop()

	// Websocket: the same request, upgraded, over a connection whose
	// reads are cut into websocket frames.
	frames := &frameTap{}
	ws, err := dialWatchWebSocket(ctx, t.srv.URL(), opts, frames)
	if err != nil {
		return fmt.Errorf("%s: the websocket watch: %w", t.here(), err)
	}
	defer ws.Close()

	// Both have replayed what happened after from; one live change more.
	wsDone := make(chan error, 1)
	wsEvents := make(chan struct{}, 8)
	go func() { wsDone <- readMessages(ws, wsEvents) }()
	if err := waitOne(ctx, chunked.ResultChan(), wsEvents, t.o.StageTimeout); err != nil {
		return fmt.Errorf("%s: the replayed event: %w", t.here(), err)
	}
	changed, err := t.writer.Patch(ctx, demoName, client.PatchTypeMerge, dataPatch("websocket"))
	if err != nil {
		return fmt.Errorf("%s: changing %s: %w", t.here(), demoKey, err)
	}
	if err := waitOne(ctx, chunked.ResultChan(), wsEvents, t.o.StageTimeout); err != nil {
		return fmt.Errorf("%s: the live change: %w", t.here(), err)
	}
	// Both streams end at the server's timeout: read them to the end.
	t.expireBoth()
	timer := time.NewTimer(t.o.StageTimeout)
	defer timer.Stop()
	for range chunked.ResultChan() {
	}
	select {
	case err := <-wsDone:
		if err != nil {
			return fmt.Errorf("%s: reading the websocket: %w", t.here(), err)
		}
	case <-timer.C:
		return t.late("the websocket watch ends at its timeout")
	case <-ctx.Done():
		return ctx.Err()
	}

	mu.Lock()
	got := append([]wireEvent(nil), chunks...)
	mu.Unlock()
	wsFrames := frames.all()
	t.tr.Printf(chunkedLayer, "GET ?watch=true → 200, Transfer-Encoding: chunked")
	t.tr.Printf(websocketLayer, "GET ?watch=true, Upgrade: websocket → 101 Switching Protocols")
	if err := t.sideBySide(got, wsFrames); err != nil {
		return fmt.Errorf("%s: %w", t.here(), err)
	}
	t.check("the same watch from rv %s over chunked HTTP and over a websocket: the same %d events "+
		"(rv %s arrived live), one chunk or one text frame each", from, countEvents(got), changed.Metadata.ResourceVersion)
	return nil
}

// The User-Agents of the chapter's two watches, by which expireBoth finds
// them.
const (
	chunkedAgent   = "tour-chunked/"
	websocketAgent = "tour-websocket/"
)

// expireBoth makes the timeout of the chapter's two watches pass now,
// through the server's timer path (the expire fault, scoped to their user
// agents so that the informer's watch goes on): a real server ends a watch
// after 30 to 60 minutes, and a short timeoutSeconds could end it before
// the live change arrived on a busy machine.
func (t *tour) expireBoth() {
	for _, agent := range []string{chunkedAgent, websocketAgent} {
		t.srv.Faults().ExpireWatchesIn(faults.WatchScope{UserAgent: agent})
	}
}

// sideBySide prints each event as a chunk and as a frame, then the two
// endings; it fails if the transports did not carry the same events.
func (t *tour) sideBySide(chunks []wireEvent, frames []wsFrame) error {
	var events []wsFrame
	var closing *wsFrame
	for i, f := range frames {
		switch f.opcode {
		case 0x1:
			events = append(events, f)
		case 0x8:
			closing = &frames[i]
		}
	}
	var evChunks []wireEvent
	ended := false
	for _, c := range chunks {
		if c.end {
			ended = true
			continue
		}
		evChunks = append(evChunks, c)
	}
	if len(evChunks) == 0 || len(evChunks) != len(events) {
		return fmt.Errorf("chunked carried %d events, the websocket %d", len(evChunks), len(events))
	}
	for i, c := range evChunks {
		f := events[i]
		ev := describeFrame("", len(f.payload), f.payload)
		t.tr.Printf(chunkedLayer, "%-34s %s", fmt.Sprintf("%q + %d bytes + %q", c.sizeLine+"\r\n", c.size, "\r\n"), c.short())
		t.tr.Printf(websocketLayer, "%-34s %s", fmt.Sprintf("% x + %d bytes", f.header, len(f.payload)), ev.short())
		if ev.typ != c.typ || ev.rv != c.rv {
			return fmt.Errorf("event %d differs: chunked %s rv %s, websocket %s rv %s", i+1, c.typ, c.rv, ev.typ, ev.rv)
		}
	}
	if !ended || closing == nil {
		return errors.New("a stream did not end cleanly at the server's timeout")
	}
	t.tr.Printf(chunkedLayer, "%q: the terminating chunk, the response is over", "0\r\n\r\n")
	t.tr.Printf(websocketLayer, "% x % x: a close frame, status %d (normal closure)", closing.header,
		closing.payload, closeCode(closing.payload))
	return nil
}

func countEvents(chunks []wireEvent) int {
	n := 0
	for _, c := range chunks {
		if !c.end {
			n++
		}
	}
	return n
}

// short is an event on one short line: type, object, resourceVersion.
func (ev wireEvent) short() string {
	return fmt.Sprintf("%s %s rv=%s", ev.typ, ev.key, ev.rv)
}

// waitOne waits for the next event on each stream.
func waitOne(ctx context.Context, chunked <-chan api.Event, ws <-chan struct{}, limit time.Duration) error {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for _, ch := range []func() <-chan struct{}{
		func() <-chan struct{} { return adapt(chunked) },
		func() <-chan struct{} { return ws },
	} {
		select {
		case <-ch():
		case <-timer.C:
			return fmt.Errorf("did not happen within %v", limit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// adapt turns the next event of ch into a signal.
func adapt(ch <-chan api.Event) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		if _, ok := <-ch; ok {
			close(out)
		}
	}()
	return out
}

// readMessages reads the websocket's text messages until the server
// closes it, signalling each on got.
func readMessages(ws *websocket.Conn, got chan<- struct{}) error {
	for {
		var msg string
		err := websocket.Message.Receive(ws, &msg)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case got <- struct{}{}:
		default:
		}
	}
}

// dialWatchWebSocket opens the watch described by opts as a websocket on a
// connection whose reads tap sees.
func dialWatchWebSocket(ctx context.Context, base string, opts api.ListOptions, tap *frameTap) (*websocket.Conn, error) {
	opts.Watch = true
	u := "ws" + strings.TrimPrefix(base, "http") + "/api/v1/namespaces/" + namespace + "/configmaps?" + opts.Values().Encode()
	cfg, err := websocket.NewConfig(u, base)
	if err != nil {
		return nil, err
	}
	cfg.Header.Set("User-Agent", websocketAgent+client.Version)
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", cfg.Location.Host)
	if err != nil {
		return nil, err
	}
	tap.Conn = raw
	ws, err := websocket.NewClient(cfg, tap)
	if err != nil {
		_ = raw.Close()
		return nil, err
	}
	return ws, nil
}

// wsFrame is one websocket frame as it came off the socket.
type wsFrame struct {
	header  []byte // FIN/opcode byte, length byte, extended length
	opcode  byte
	payload []byte
}

// frameTap is a connection that cuts what it reads into websocket frames
// (after the 101 answer's headers). The server's frames are unmasked.
type frameTap struct {
	net.Conn
	mu      sync.Mutex
	pending []byte
	frames  []wsFrame
	headers bool // the 101 answer has been read past
}

func (f *frameTap) Read(p []byte) (int, error) {
	n, err := f.Conn.Read(p)
	if n > 0 {
		f.mu.Lock()
		f.pending = append(f.pending, p[:n]...)
		f.cut()
		f.mu.Unlock()
	}
	return n, err
}

// cut moves every complete frame from pending to frames.
func (f *frameTap) cut() {
	if !f.headers {
		i := bytes.Index(f.pending, []byte("\r\n\r\n"))
		if i < 0 {
			return
		}
		f.pending, f.headers = f.pending[i+4:], true
	}
	for len(f.pending) >= 2 {
		b := f.pending
		hdr, size := 2, int(b[1]&0x7f)
		switch size {
		case 126:
			if len(b) < 4 {
				return
			}
			hdr, size = 4, int(binary.BigEndian.Uint16(b[2:4]))
		case 127:
			if len(b) < 10 {
				return
			}
			hdr, size = 10, int(binary.BigEndian.Uint64(b[2:10]))
		}
		if b[1]&0x80 != 0 {
			hdr += 4 // a masking key; servers do not mask, but be safe
		}
		if len(b) < hdr+size {
			return
		}
		f.frames = append(f.frames, wsFrame{
			header:  append([]byte(nil), b[:hdr]...),
			opcode:  b[0] & 0x0f,
			payload: append([]byte(nil), b[hdr:hdr+size]...),
		})
		f.pending = b[hdr+size:]
	}
}

func (f *frameTap) all() []wsFrame {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wsFrame(nil), f.frames...)
}

// closeCode is the status code a close frame's payload starts with.
func closeCode(payload []byte) int {
	if len(payload) < 2 {
		return 0
	}
	return int(binary.BigEndian.Uint16(payload))
}
