package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
	"listwatch/internal/syncbuf"
	"listwatch/narrate"
)

// watchOver opens a watch on a scripted server over transport.
func watchOver(t *testing.T, transport TransportKind, sc script, mutate ...func(*Config)) (Watcher, func()) {
	t.Helper()
	srv := newScriptedServer(t, sc)
	c := newTestClient(t, srv, transport, mutate...)
	w, err := c.Resource(configMaps).Namespace("ns").Watch(context.Background(), api.ListOptions{})
	require.NoError(t, err)
	return w, func() {
		w.Stop()
		srv.Close()
	}
}

// forEachTransport runs f once over chunked HTTP and once over websocket.
func forEachTransport(t *testing.T, f func(t *testing.T, transport TransportKind)) {
	for _, tk := range transports {
		t.Run(tk.String(), func(t *testing.T) {
			defer leakcheck.Check(t)()
			f(t, tk)
		})
	}
}

func TestStreamWatcherCutsFramesNotLines(t *testing.T) {
	evs := []api.Event{cm(api.Added, "a", "11"), cm(api.Modified, "a", "12"), bookmark("13"), cm(api.Deleted, "a", "14")}
	var all []byte
	for i, ev := range evs {
		all = append(all, bytes.TrimSuffix(eventLine(t, ev), []byte("\n"))...)
		// Whitespace between events is irrelevant: none, spaces, CRLF,
		// several newlines.
		all = append(all, []string{"", "  \t", "\r\n\r\n", "\n\n\n"}[i%4]...)
	}
	cases := map[string]func(s stream){
		"all in one write": func(s stream) { s.Send(all) },
		"7 bytes per write": func(s stream) {
			for i := 0; i < len(all); i += 7 {
				s.Send(all[i:min(i+7, len(all))])
			}
		},
		"1 byte per write around the first frame": func(s stream) {
			for i := range 40 {
				s.Send(all[i : i+1])
			}
			s.Send(all[40:])
		},
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			forEachTransport(t, func(t *testing.T, tk TransportKind) {
				w, done := watchOver(t, tk, func(s stream, _ *http.Request) { send(s) })
				defer done()
				require.Equal(t, evs, collect(t, w))
			})
		})
	}
}

func TestStreamWatcherEndsSilently(t *testing.T) {
	one := eventLine(t, cm(api.Added, "a", "5"))
	cases := map[string]struct {
		sc   func(s stream, proceed <-chan struct{})
		want int
		// why is what the narration says ended the stream.
		why string
	}{
		"clean end (server timeout)": {func(s stream, _ <-chan struct{}) { s.Send(one) }, 1, "(EOF)"},
		"empty body":                 {func(stream, <-chan struct{}) {}, 0, "(EOF)"},
		"dropped between events": {func(s stream, proceed <-chan struct{}) {
			s.Send(one)
			<-proceed
			s.Drop()
		}, 1, "EOF)"},
		"dropped mid-frame (unexpected EOF)": {func(s stream, proceed <-chan struct{}) {
			s.Send(one)
			<-proceed
			s.Send(one[:len(one)/2])
			s.Drop()
		}, 1, "(unexpected EOF)"},
		"connection reset mid-frame": {func(s stream, proceed <-chan struct{}) {
			s.Send(one)
			<-proceed
			s.Send(one[:len(one)/2])
			s.Reset()
		}, 1, "connection reset by peer)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			forEachTransport(t, func(t *testing.T, tk TransportKind) {
				proceed := make(chan struct{})
				var log syncbuf.Buffer
				w, done := watchOver(t, tk, func(s stream, _ *http.Request) { tc.sc(s, proceed) },
					func(c *Config) { c.Tracer = narrate.New(&log, narrate.WithoutTimes()) })
				defer done()
				if tc.want == 1 {
					// The server drops the connection only once the
					// first event is through, so a reset cannot
					// discard it in the kernel.
					assert.Equal(t, cm(api.Added, "a", "5"), next(t, w))
				}
				close(proceed)
				requireClosed(t, w)
				<-w.(*StreamWatcher).Done()
				assert.Contains(t, log.String(), "stream ended ")
				assert.Contains(t, log.String(), tc.why)
				assert.NotContains(t, log.String(), "ERROR")
			})
		})
	}
}

func TestStreamWatcherDeliversServerErrorEventAsIs(t *testing.T) {
	gone := api.NewResourceExpired("too old resource version: 98 (116)")
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		w, done := watchOver(t, tk, func(s stream, _ *http.Request) {
			s.Send(eventLine(t, api.Event{Type: api.Error, Status: gone}))
		})
		defer done()
		ev := next(t, w)
		require.Equal(t, api.Error, ev.Type)
		require.Equal(t, gone, ev.Status)
		requireClosed(t, w)
	})
}

func TestStreamWatcherReportsUndecodableStreamOnce(t *testing.T) {
	good := eventLine(t, cm(api.Added, "a", "5"))
	cases := map[string][]byte{
		"garbage":             []byte("this is not json\n"),
		"unknown event type":  []byte(`{"type":"RENAMED","object":{"kind":"ConfigMap"}}` + "\n"),
		"event without body":  []byte(`{"type":"ADDED"}` + "\n"),
		"not an object":       []byte(`["ADDED"]` + "\n"),
		"broken inside frame": []byte(`{"type":"ADDED","object":{"kind":}}` + "\n"),
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			forEachTransport(t, func(t *testing.T, tk TransportKind) {
				w, done := watchOver(t, tk, func(s stream, _ *http.Request) {
					s.Send(good)
					s.Send(bad)
					s.Send(good) // never decoded: there is no resynchronising
				})
				defer done()
				require.Equal(t, cm(api.Added, "a", "5"), next(t, w))
				requireDecodeError(t, next(t, w))
				requireClosed(t, w)
			})
		})
	}
}

// requireDecodeError checks the ERROR event a StreamWatcher makes for a
// stream it cannot decode: client-go's 500 InternalError shape.
func requireDecodeError(t *testing.T, ev api.Event) *api.Status {
	t.Helper()
	require.Equal(t, api.Error, ev.Type)
	require.NotNil(t, ev.Status)
	assert.EqualValues(t, http.StatusInternalServerError, ev.Status.Code)
	assert.Equal(t, api.ReasonInternalError, ev.Status.Reason)
	assert.Equal(t, api.StatusFailure, ev.Status.Status)
	assert.Contains(t, ev.Status.Message, "unable to decode an event from the watch stream: ")
	require.NotNil(t, ev.Status.Details)
	require.Len(t, ev.Status.Details.Causes, 2)
	assert.Equal(t, causeClientWatchDecoding, ev.Status.Details.Causes[1].Type)
	return ev.Status
}

func TestStreamWatcherRefusesEventOverSixteenMiB(t *testing.T) {
	if testing.Short() {
		// 16 MiB per transport under -race: tens of seconds on two busy
		// cores. TestEventDecoderLimitIsExact checks the same limit on a
		// small one.
		t.Skip("-short: 16 MiB events; TestEventDecoderLimitIsExact checks the limit, and the full run executes this")
	}
	// A real 16 MiB + 1 frame, in 1 MiB writes: an error, not an
	// unbounded allocation.
	huge := []byte(`{"type":"ADDED","object":{"kind":"ConfigMap","data":{"k":"`)
	huge = append(huge, bytes.Repeat([]byte("x"), MaxEventBytes)...)
	huge = append(huge, `"}}}`+"\n"...)
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		w, done := watchOver(t, tk, func(s stream, r *http.Request) {
			s.Send(eventLine(t, cm(api.Added, "a", "5")))
			for i := 0; i < len(huge) && r.Context().Err() == nil; i += 1 << 20 {
				s.Send(huge[i:min(i+1<<20, len(huge))])
			}
		})
		defer done()
		require.Equal(t, cm(api.Added, "a", "5"), next(t, w))
		st := requireDecodeError(t, next(t, w))
		assert.Contains(t, st.Message, ErrEventTooLarge.Error())
		requireClosed(t, w)
	})
}

func TestStreamWatcherStop(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		serverSawClientGo := make(chan struct{})
		w, done := watchOver(t, tk, func(s stream, _ *http.Request) {
			s.Send(eventLine(t, cm(api.Added, "a", "5")))
			s.Send(eventLine(t, cm(api.Added, "b", "6")))
			s.Stall() // returns when the client has gone
			close(serverSawClientGo)
		})
		defer done()
		require.Zero(t, cap(w.ResultChan()), "ResultChan must be unbuffered")
		require.Equal(t, cm(api.Added, "a", "5"), next(t, w))
		// The reader is now blocked handing over "b"; Stop from many
		// goroutines at once, several times each.
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				w.Stop()
				w.Stop()
			})
		}
		wg.Wait()
		requireClosed(t, w)
		select {
		case <-serverSawClientGo: // the body (the connection) was closed
		case <-timeout(t):
			t.Fatal("server never saw the client go away")
		}
		w.Stop()
	})
}

func TestStreamWatcherStopWhileReadBlocks(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		w, done := watchOver(t, tk, func(s stream, _ *http.Request) { s.Stall() })
		defer done()
		w.Stop()
		requireClosed(t, w)
		<-w.(*StreamWatcher).Done()
	})
}

func TestStreamWatcherEndsWhenContextIsCancelled(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		srv := newScriptedServer(t, func(s stream, _ *http.Request) {
			s.Send(eventLine(t, cm(api.Added, "a", "5")))
			s.Stall()
		})
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w, err := newTestClient(t, srv, tk).Resource(configMaps).Watch(ctx, api.ListOptions{})
		require.NoError(t, err)
		defer w.Stop()
		require.Equal(t, cm(api.Added, "a", "5"), next(t, w))
		cancel()
		requireClosed(t, w) // silently: the caller asked for the end
	})
}

// The idle timeout runs on a fake clock: the test moves time itself, so a
// busy machine can neither cut the watch early nor keep it up late.
func TestIdleWatchTimeoutEndsHalfOpenWatch(t *testing.T) {
	const idle = 300 * time.Millisecond
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		send := make(chan int)
		srv := newScriptedServer(t, func(s stream, r *http.Request) {
			for range 3 {
				select {
				case i := <-send:
					s.Send(eventLine(t, bookmark(strconv.Itoa(i+1))))
				case <-r.Context().Done():
					return
				}
			}
			s.Stall() // half-open: nothing more, no FIN, no RST
		})
		defer srv.Close()
		c := newTestClient(t, srv, tk, func(c *Config) { c.IdleWatchTimeout = idle })
		fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		c.clock = fake
		w, err := c.Resource(configMaps).Namespace("ns").Watch(context.Background(), api.ListOptions{})
		require.NoError(t, err)
		defer w.Stop()

		for i := range 3 {
			// Two thirds of the timeout go by, then bytes arrive: each
			// re-arms the whole timeout, so the watch outlives the
			// timeout many times over (it could not deliver the next
			// bookmark otherwise).
			fake.Step(2 * idle / 3)
			send <- i
			assert.Equal(t, bookmark(strconv.Itoa(i+1)), next(t, w))
			ws := fake.Waiters()
			require.Len(t, ws, 1, "one idle timeout")
			ws[0].Arming = 0 // how many times it was armed is not the point here
			require.Equal(t, clock.Waiter{Kind: clock.KindAfterFunc, Duration: idle, Deadline: fake.Now().Add(idle)},
				ws[0], "the bytes re-armed the idle timeout")
		}
		fake.Step(idle - time.Nanosecond)
		assert.True(t, fake.HasWaiters(), "not idle yet")
		fake.Step(time.Nanosecond)
		requireClosed(t, w) // silently, so a RetryWatcher re-watches
	})
}

func TestNewStreamWatcherOverAnyReader(t *testing.T) {
	defer leakcheck.Check(t)()
	pr, pw := io.Pipe()
	w := NewStreamWatcher(pr, nil)
	go func() {
		_, _ = pw.Write(eventLine(t, cm(api.Added, "a", "1")))
		_ = pw.CloseWithError(errors.New("read tcp 10.0.0.1:443: connection reset by peer"))
	}()
	require.Equal(t, []api.Event{cm(api.Added, "a", "1")}, collect(t, w))
	<-w.Done()
}

func TestEventDecoderLimitIsExact(t *testing.T) {
	line := eventLine(t, cm(api.Added, "a", "1")) // counted with its '\n'
	stream := bytes.Repeat(line, 3)
	// Every frame, with the whitespace before it, is len(line) bytes
	// (the first has none before it, the others take the previous '\n').
	dec := NewEventDecoder(iotestOneByte(bytes.NewReader(stream)), len(line))
	for range 3 {
		_, err := dec.Decode()
		require.NoError(t, err)
	}
	_, err := dec.Decode()
	require.ErrorIs(t, err, io.EOF)

	dec = NewEventDecoder(bytes.NewReader(stream), len(line)-2)
	_, err = dec.Decode()
	require.ErrorIs(t, err, ErrEventTooLarge)
}

// iotestOneByte returns r's bytes one per Read, the worst framing there is.
func iotestOneByte(r io.Reader) io.Reader { return &oneByteReader{r} }

type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestIsProbableEOF(t *testing.T) {
	cases := map[string]bool{
		"EOF":            true,
		"unexpected EOF": true,
		"read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer":   true,
		"write tcp 127.0.0.1:1->127.0.0.1:2: write: broken pipe":              true,
		"read tcp 127.0.0.1:1: use of closed network connection":              true,
		"http2: server sent GOAWAY and closed the connection; LastStreamID=1": true,
		"http: can't write HTTP request on broken connection":                 true,
		"http: server closed idle connection":                                 true,
		"invalid character 'x' looking for beginning of value":                false,
		"x509: certificate signed by unknown authority":                       false,
	}
	for msg, want := range cases {
		var err error
		switch msg {
		case "EOF":
			err = io.EOF
		case "unexpected EOF":
			err = io.ErrUnexpectedEOF
		default:
			err = errors.New(msg)
		}
		assert.Equal(t, want, IsProbableEOF(err), msg)
		assert.Equal(t, want, IsProbableEOF(&url.Error{Op: "Get", URL: "http://x", Err: err}), "wrapped: "+msg)
	}
	assert.False(t, IsProbableEOF(nil))
	assert.True(t, IsProbableEOF(errors.Join(errors.New("x"), io.EOF)))
}
