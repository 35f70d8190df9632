package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// Fuzz targets for the watch stream: whatever bytes a server (or anything
// between it and us) sends as a watch body must come out as events, a
// clean end, or one ERROR event and a clean end: never a panic, a hang, or
// a channel that stays open. The seed corpora in testdata/fuzz/ are the
// recorded watch streams of a real kube-apiserver (every
// testdata/fixtures/*.jsonl) plus hand-made broken ones. Run longer with
//
//	go test ./client -run '^$' -fuzz FuzzEventDecoder -fuzztime 5m
//	go test ./client -run '^$' -fuzz FuzzStreamWatcher -fuzztime 5m

// fuzzMaxEventBytes is the event size limit in the fuzz targets: small, so
// that the fuzzer reaches the oversized-event path with small inputs.
const fuzzMaxEventBytes = 512

// jsonSpace is JSON's whitespace (RFC 8259), narrower than Unicode's: a
// form feed, say, is not a clean end but a syntax error.
const jsonSpace = " \t\r\n"

// fuzzTimeout bounds each input; a watch that has not closed by then hangs.
const fuzzTimeout = 10 * time.Second

// decodeAll runs an EventDecoder over r to its end. Each Decode consumes
// input or fails, so it cannot loop for ever; the bound is a safety net.
func decodeAll(t *testing.T, r io.Reader, limit int) ([]api.Event, error) {
	t.Helper()
	dec := NewEventDecoder(r, fuzzMaxEventBytes)
	var events []api.Event
	for i := 0; i <= limit; i++ {
		ev, err := dec.Decode()
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	t.Fatalf("decoder returned more than %d events from %d bytes", limit, limit)
	return nil, nil
}

// chunkedReader hands out its data in reads of the sizes given (cycled), the
// way a network splits a stream: event boundaries and read boundaries have
// nothing to do with each other.
type chunkedReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(r.sizes) > 0 {
		n = int(r.sizes[r.i%len(r.sizes)])%64 + 1
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// Arbitrary bytes decode to valid events followed by one error (io.EOF for
// a clean end), and how the bytes are split into reads changes nothing.
func FuzzEventDecoder(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"1"}}}`+"\n"), []byte{3, 7})
	f.Fuzz(func(t *testing.T, data, splits []byte) {
		whole, wholeErr := decodeAll(t, bytes.NewReader(data), len(data))
		require.Error(t, wholeErr)
		for _, ev := range whole {
			b, err := ev.MarshalJSON()
			require.NoError(t, err, "a decoded event must be a valid event")
			var again api.Event
			require.NoError(t, again.UnmarshalJSON(b), "%s", b)
		}
		if len(whole) == 0 && len(bytes.Trim(data, jsonSpace)) == 0 && len(data) < fuzzMaxEventBytes {
			// (Whitespace counts towards the next frame's size limit, as
			// EventDecoder documents: the limit's worth of it is an
			// oversized frame, even at the end of the stream.)
			require.ErrorIs(t, wholeErr, io.EOF, "only whitespace is a clean, empty stream")
		}

		split, splitErr := decodeAll(t, &chunkedReader{data: data, sizes: splits}, len(data))
		require.Equal(t, len(whole), len(split), "events depend on how the stream was split into reads")
		for i := range whole {
			a, _ := whole[i].MarshalJSON()
			b, _ := split[i].MarshalJSON()
			require.Equal(t, string(a), string(b), "event %d depends on how the stream was split", i)
		}
		require.Equal(t, errors.Is(wholeErr, io.EOF), errors.Is(splitErr, io.EOF), "end: %v vs %v", wholeErr, splitErr)
		require.Equal(t, errors.Is(wholeErr, ErrEventTooLarge), errors.Is(splitErr, ErrEventTooLarge), "end: %v vs %v", wholeErr, splitErr)
	})
}

// Arbitrary bytes as a watch body: the StreamWatcher delivers exactly the
// events the decoder finds, then either closes ResultChan quietly (a clean
// end) or delivers one ERROR event and closes it, and in every case the
// channel closes in bounded time. With stopAfter > 0 the body stays open
// (as a live watch does) and Stop is called after that many events: the
// channel must close too, and nothing may arrive after Stop returned.
func FuzzStreamWatcher(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"1"}}}`+"\n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, stopAfter uint8) {
		ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
		defer cancel()
		want, decErr := decodeAll(t, bytes.NewReader(data), len(data))

		if stopAfter == 0 {
			w := newStreamWatcher(io.NopCloser(bytes.NewReader(data)), fuzzMaxEventBytes, nil)
			got := fuzzCollect(ctx, t, w.ResultChan())
			fuzzRequireDone(ctx, t, w)
			if endsQuietly(decErr) {
				require.Len(t, got, len(want), "a clean end delivers exactly the decoded events")
			} else {
				require.Len(t, got, len(want)+1, "a broken stream ends with one ERROR event (decoder: %v)", decErr)
				last := got[len(got)-1]
				require.Equal(t, api.Error, last.Type)
				require.NotNil(t, last.Status)
				require.EqualValues(t, 500, last.Status.Code)
				require.Contains(t, last.Status.Message, "unable to decode an event from the watch stream")
			}
			for i := range want {
				a, _ := want[i].MarshalJSON()
				b, _ := got[i].MarshalJSON()
				require.Equal(t, string(a), string(b), "event %d", i)
			}
			return
		}

		// A live body: the data, then nothing, until Stop closes it.
		pr, pw := io.Pipe()
		go func() {
			_, _ = pw.Write(data) // returns once read, or once Stop closed the pipe
		}()
		w := newStreamWatcher(pr, fuzzMaxEventBytes, nil)
		// Every event the decoder found is a complete JSON object, so it
		// arrives without the body ending; take that many (at most
		// stopAfter), then stop the watch in the middle of the stream.
		for i := range min(int(stopAfter), len(want)) {
			select {
			case ev, ok := <-w.ResultChan():
				require.True(t, ok, "ResultChan closed before event %d of %d", i+1, len(want))
				a, _ := want[i].MarshalJSON()
				b, _ := ev.MarshalJSON()
				require.Equal(t, string(a), string(b), "event %d", i)
			case <-ctx.Done():
				t.Fatalf("event %d of %d never arrived", i+1, len(want))
			}
		}
		w.Stop()
		// Once Stop has returned nothing more may arrive (see
		// chaos/repro_test.go, TestReproStreamWatcherDeliversAfterStop).
		for _, ev := range fuzzCollect(ctx, t, w.ResultChan()) {
			t.Fatalf("an event (%s) arrived after Stop returned", ev.Type)
		}
		fuzzRequireDone(ctx, t, w)
	})
}

// fuzzCollect reads ch until it closes (or the context ends, which fails).
func fuzzCollect(ctx context.Context, t *testing.T, ch <-chan api.Event) []api.Event {
	t.Helper()
	var out []api.Event
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-ctx.Done():
			t.Fatalf("ResultChan did not close within %v (%d events so far)", fuzzTimeout, len(out))
		}
	}
}

// fuzzRequireDone waits for the watcher's goroutine to be gone.
func fuzzRequireDone(ctx context.Context, t *testing.T, w *StreamWatcher) {
	t.Helper()
	select {
	case <-w.Done():
	case <-ctx.Done():
		t.Fatal("the StreamWatcher's goroutine did not end")
	}
}
