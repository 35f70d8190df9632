package api

import "io"

// ListWriter writes a List's JSON item by item, exactly as List.AppendJSON
// would lay it out, through one buffer that it hands to the writer whenever
// it passes a threshold. A server answering a LIST of 50,000 objects with
// it holds one buffer of about that threshold instead of the whole 50 MB
// document (kube-apiserver 1.33 streams its JSON list encoding for the
// same reason). The objects themselves are shared and never copied.
type ListWriter struct {
	w         io.Writer
	buf       []byte
	threshold int
	items     int
	err       error
}

// DefaultListChunk is the threshold NewListWriter uses for a zero chunk:
// 64 KiB per write, large enough that the write calls cost nothing next
// to the encoding.
const DefaultListChunk = 64 << 10

// NewListWriter starts a list of kind and apiVersion with its metadata;
// chunk is the write threshold in bytes (0: DefaultListChunk). Nothing is
// written until the first threshold or Close.
func NewListWriter(w io.Writer, kind, apiVersion string, meta ListMeta, chunk int) *ListWriter {
	if chunk <= 0 {
		chunk = DefaultListChunk
	}
	lw := &ListWriter{w: w, threshold: chunk, buf: make([]byte, 0, chunk+chunk/4)}
	lw.buf = append(lw.buf, `{"kind":`...)
	lw.buf = AppendJSONString(lw.buf, kind, EscapeInvalidUTF8)
	lw.buf = append(lw.buf, `,"apiVersion":`...)
	lw.buf = AppendJSONString(lw.buf, apiVersion, EscapeInvalidUTF8)
	lw.buf = append(lw.buf, `,"metadata":`...)
	lw.buf = meta.appendJSON(lw.buf)
	lw.buf = append(lw.buf, `,"items":[`...)
	return lw
}

// Item appends one item. After a write error every call returns it and
// writes nothing more: the client is gone, so the rest is not encoded.
func (lw *ListWriter) Item(o *Object) error {
	if lw.err != nil {
		return lw.err
	}
	if lw.items > 0 {
		lw.buf = append(lw.buf, ',')
	}
	lw.items++
	lw.buf = o.AppendJSON(lw.buf)
	if len(lw.buf) >= lw.threshold {
		lw.flush()
	}
	return lw.err
}

// Close ends the list with "]}" and the newline a response body carries,
// and writes what is left.
func (lw *ListWriter) Close() error {
	if lw.err != nil {
		return lw.err
	}
	lw.buf = append(lw.buf, "]}\n"...)
	lw.flush()
	return lw.err
}

func (lw *ListWriter) flush() {
	if _, err := lw.w.Write(lw.buf); err != nil {
		lw.err = err
	}
	lw.buf = lw.buf[:0]
	if cap(lw.buf) > 4*lw.threshold {
		// One huge object grew the buffer; do not keep it for the rest.
		lw.buf = make([]byte, 0, lw.threshold+lw.threshold/4)
	}
}
