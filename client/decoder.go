package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"listwatch/api"
)

// MaxEventBytes is the largest watch event the decoder accepts, the limit
// client-go's watch decoder uses (16 MiB). A bigger frame is far beyond any
// real object (etcd itself refuses values over 1.5 MiB by default), so it
// means a broken or hostile stream, and reading it would let the server
// decide how much memory we allocate.
const MaxEventBytes = 16 << 20

// ErrEventTooLarge is returned (wrapped) for an event over the size limit.
var ErrEventTooLarge = errors.New("watch event too large")

// EventDecoder cuts a watch stream into events.
//
// The framing. A watch response is one HTTP body that never ends on its
// own: the server writes one JSON object per event,
//
//	{"type":"ADDED","object":{...}}\n{"type":"MODIFIED","object":{...}}\n...
//
// and sends it with Transfer-Encoding: chunked, flushing after each event
// (or a few at once). The chunks are not the events: the recordings show
// several events in one chunk, and over a slow link one event may arrive in
// several TCP packets. The newline is not the frame either: it is only the
// whitespace the server happens to put between values. So the stream is
// cut the only robust way, as a sequence of JSON values: a json.Decoder
// reads exactly one complete value, however it was split or padded, and
// the next call starts where it stopped. Over a websocket the payloads of
// the text messages are concatenated and cut the same way.
//
// This is the job of client-go's streaming JSON decoder
// (apimachinery/pkg/runtime/serializer/streaming with a JSON framer).
type EventDecoder struct {
	limit *frameLimiter
	dec   *json.Decoder
}

// NewEventDecoder decodes the events of r, refusing any event larger than
// maxBytes (MaxEventBytes if maxBytes <= 0).
func NewEventDecoder(r io.Reader, maxBytes int) *EventDecoder {
	if maxBytes <= 0 {
		maxBytes = MaxEventBytes
	}
	l := &frameLimiter{r: r, max: maxBytes}
	return &EventDecoder{limit: l, dec: json.NewDecoder(l)}
}

// Decode reads the next event. It returns io.EOF when the stream ended
// cleanly between events, io.ErrUnexpectedEOF when it ended inside one, an
// error wrapping ErrEventTooLarge for an oversized event, the reader's own
// error if reading failed, and a decoding error for bytes that are not a
// watch event. After any error the decoder is finished.
func (d *EventDecoder) Decode() (api.Event, error) {
	// Budget this frame: the limit counts bytes pulled from the stream
	// while decoding it, and bytes already buffered (read ahead with the
	// previous frame) count against it too, so a frame passes exactly when
	// it, with the whitespace before it, fits in max bytes.
	d.limit.reset(buffered(d.dec))
	var raw json.RawMessage
	if err := d.dec.Decode(&raw); err != nil {
		return api.Event{}, err
	}
	var ev api.Event
	if err := ev.UnmarshalJSON(raw); err != nil {
		return api.Event{}, err
	}
	return ev, nil
}

// buffered is how many bytes dec has read ahead and not consumed yet.
func buffered(dec *json.Decoder) int {
	if l, ok := dec.Buffered().(interface{ Len() int }); ok {
		return l.Len()
	}
	return 0
}

// frameLimiter passes reads through until the current frame has used its
// budget, then fails them with ErrEventTooLarge. It is reset before each
// frame, unlike io.LimitReader, which limits a whole stream.
type frameLimiter struct {
	r         io.Reader
	max       int
	remaining int
}

func (l *frameLimiter) reset(alreadyBuffered int) { l.remaining = l.max - alreadyBuffered }

func (l *frameLimiter) Read(p []byte) (int, error) {
	if l.remaining <= 0 {
		return 0, fmt.Errorf("%w: more than %d bytes", ErrEventTooLarge, l.max)
	}
	if len(p) > l.remaining {
		p = p[:l.remaining]
	}
	n, err := l.r.Read(p)
	l.remaining -= n
	return n, err
}
