package client

import (
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
// and sends it with Transfer-Encoding: chunked (or as HTTP/2 DATA frames),
// flushing after each event (or a few at once). The chunks are not the
// events: the recordings show several events in one chunk, and over a slow
// link one event may arrive in several TCP packets. The newline is not the
// frame either: it is only the whitespace the server happens to put between
// values. So the stream is cut the only robust way, as a sequence of JSON
// values. Over a websocket the payloads of the text messages are
// concatenated and cut the same way.
//
// One scan. The decoder reads the stream into a buffer of its own and
// decodes the event where it lies in the buffer (api.DecodeEvent), which
// finds the end of the event as it decodes it: each byte is read once, not
// once to find the frame, once to copy it and once more to decode it. Only
// an event that is not all in the buffer yet costs more: the decoder then
// reads on, following the event's brackets and strings to its end without
// decoding (frameScanner), and decodes it once it is whole.
//
// This is the job of client-go's streaming JSON decoder
// (apimachinery/pkg/runtime/serializer/streaming with a JSON framer).
type EventDecoder struct {
	r   io.Reader
	max int
	// buf[start:end] are bytes read and not decoded yet.
	buf        []byte
	start, end int
	// err is the reader's error, kept until the buffered bytes are used.
	err error
}

// decoderBufferSize is the buffer a decoder starts with; it grows for an
// event that does not fit, up to the size limit.
const decoderBufferSize = 32 << 10

// NewEventDecoder decodes the events of r, refusing any event larger than
// maxBytes (MaxEventBytes if maxBytes <= 0).
func NewEventDecoder(r io.Reader, maxBytes int) *EventDecoder {
	if maxBytes <= 0 {
		maxBytes = MaxEventBytes
	}
	return &EventDecoder{r: r, max: maxBytes}
}

// Decode reads the next event. It returns io.EOF when the stream ended
// cleanly between events, io.ErrUnexpectedEOF when it ended inside one, an
// error wrapping ErrEventTooLarge for an event that, with the whitespace
// before it, is larger than the limit, the reader's own error if reading
// failed, and a decoding error for bytes that are not a watch event. After
// any error the decoder is finished.
func (d *EventDecoder) Decode() (api.Event, error) {
	// The common case: the whole event is buffered; decoding it finds
	// where it ends.
	if d.end > d.start {
		ev, n, err := api.DecodeEvent(d.buf[d.start:d.end])
		switch {
		case err == nil && n <= d.max:
			d.start += n
			return ev, nil
		case err == nil:
			return api.Event{}, d.tooLarge()
		}
		// Not decodable from what is here: either the event is not all
		// here yet, or it is broken. Only its end tells which.
	}
	// Read on to the event's end, then decode it.
	var sc frameScanner
	for {
		if frame, done := sc.scan(d.buf[d.start:d.end]); done {
			if frame > d.max {
				return api.Event{}, d.tooLarge()
			}
			ev, n, err := api.DecodeEvent(d.buf[d.start : d.start+frame])
			if err != nil {
				return api.Event{}, err
			}
			d.start += n
			return ev, nil
		}
		if d.end-d.start >= d.max {
			return api.Event{}, d.tooLarge()
		}
		if d.err != nil {
			if d.err == io.EOF && sc.onlySpace {
				return api.Event{}, io.EOF
			}
			if d.err == io.EOF {
				return api.Event{}, io.ErrUnexpectedEOF
			}
			return api.Event{}, d.err
		}
		d.fill()
	}
}

func (d *EventDecoder) tooLarge() error {
	return fmt.Errorf("%w: more than %d bytes", ErrEventTooLarge, d.max)
}

// fill reads once more into the buffer, first moving what is left to its
// start, or growing it (never beyond the limit plus one read's worth) when
// it is full.
func (d *EventDecoder) fill() {
	if d.start > 0 {
		d.end = copy(d.buf, d.buf[d.start:d.end])
		d.start = 0
	}
	if d.end == len(d.buf) {
		size := max(2*len(d.buf), decoderBufferSize)
		size = min(size, d.max+decoderBufferSize)
		grown := make([]byte, size)
		copy(grown, d.buf[:d.end])
		d.buf = grown
	}
	n, err := d.r.Read(d.buf[d.end:])
	d.end += n
	if err != nil {
		d.err = err
	}
}

// frameScanner finds where the JSON value at the start of a stream ends,
// without decoding it: it follows brackets and strings only. It is
// resumable: scan may be called again with the same bytes and more after
// them, and goes on where it stopped.
type frameScanner struct {
	pos       int // bytes of data already scanned
	depth     int
	inString  bool
	escaped   bool
	started   bool
	onlySpace bool // set once scan has seen only whitespace so far
}

// scan looks at data (the same bytes as before, and maybe more) and
// reports the length of the first value, leading whitespace included, once
// done. A value that does not start with '{' or '[' is done at once: it is
// not an event, and the decoder says why.
func (s *frameScanner) scan(data []byte) (n int, done bool) {
	s.onlySpace = !s.started
	for ; s.pos < len(data); s.pos++ {
		c := data[s.pos]
		if !s.started {
			switch c {
			case ' ', '\t', '\n', '\r':
				continue
			case '{', '[':
				s.started, s.onlySpace, s.depth = true, false, 1
				continue
			default:
				s.onlySpace = false
				return s.pos + 1, true
			}
		}
		switch {
		case s.inString:
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
		case c == '"':
			s.inString = true
		case c == '{' || c == '[':
			s.depth++
		case c == '}' || c == ']':
			s.depth--
			if s.depth == 0 {
				s.pos++
				return s.pos, true
			}
		}
	}
	return 0, false
}
