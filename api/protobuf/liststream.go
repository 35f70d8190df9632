package protobuf

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A LIST answered in protobuf, written one item at a time, as
// kube-apiserver 1.37 writes it: k8s.io/apimachinery v0.37.2
// pkg/runtime/serializer/protobuf/collections.go (getStreamingListData,
// streamingEncodeUnknownList), which k8s.io/apiserver turns on for every
// API group (pkg/server/genericapiserver.go, NewDefaultAPIGroupInfo:
// WithStreamingCollectionEncodingToProtobuf).
//
// The body is the usual magic and runtime.Unknown, whose raw field holds
// the List message {ListMeta metadata = 1; repeated Item items = 2}.
// Protobuf puts a length before every nested message, and the envelope's
// raw field is itself one, so the size of the whole list must be known
// before its first byte is written. Kubernetes asks every item for its
// Size() first (the generated code computes it without encoding), then
// writes each item in turn with its generated Marshal. We hold JSON, so
// the first pass transcodes every item to learn its length, and offers
// the encoding to an ItemCache; the second takes it back from the cache,
// or transcodes the item again when the cache did not keep it. Either way
// the list itself holds one item's encoding and a chunk of output at a
// time, not the whole list.

// ListItems appends the JSON of item i of a list to dst. An error (the
// client went away) stops the list there.
type ListItems func(i int, dst []byte) ([]byte, error)

// ItemCache remembers the protobuf encodings of a list's items (the item
// message, without tag or length), so that an item is transcoded once and
// not once per pass, or per list. A StreamingList asks Load before it
// transcodes an item and offers every encoding it makes to Store. The
// cache may keep or drop what it is offered; what Load returns must be
// exactly what transcoding the item gives, and is only read.
type ItemCache interface {
	Load(i int) ([]byte, bool)
	// Store offers the encoding of item i; pb is only valid during the
	// call, so a cache that keeps it keeps a copy.
	Store(i int, pb []byte)
}

// noCache is the ItemCache that keeps nothing.
type noCache struct{}

func (noCache) Load(int) ([]byte, bool) { return nil, false }
func (noCache) Store(int, []byte)       {}

// StreamingList is a protobuf List whose items are transcoded as it is
// written (NewStreamingList, then WriteTo).
type StreamingList struct {
	apiVersion, kind string
	// meta is the ListMeta message; item is the items' message.
	meta    []byte
	item    *message
	items   ListItems
	cache   ItemCache
	sizes   []int
	rawSize int
}

// listChunk is how much output WriteTo gathers before each write: large
// enough that write calls cost nothing next to the transcoding.
const listChunk = 64 << 10

// NewStreamingList sizes a List of apiVersion/listKind with metadata
// metaJSON (a ListMeta) and n items. Every item cache does not hold is
// transcoded here and offered to it, so an item that does not fit its
// kind's schema is an error before anything is written, and the caller can
// still answer with an error. cache may be nil: nothing is remembered.
func (s *Schema) NewStreamingList(apiVersion, listKind string, metaJSON []byte, n int, items ListItems, cache ItemCache) (*StreamingList, error) {
	lm, err := s.kind(apiVersion, listKind)
	if err != nil {
		return nil, err
	}
	metaField, itemField := listFields(lm)
	if metaField == nil {
		return nil, fmt.Errorf("%s %s: not a list of metadata = 1 and items = 2", apiVersion, listKind)
	}
	if cache == nil {
		cache = noCache{}
	}
	l := &StreamingList{apiVersion: apiVersion, kind: listKind, item: itemField.msg, items: items, cache: cache, sizes: make([]int, n)}
	if l.meta, err = appendMarshal(nil, metaField.msg, metaJSON); err != nil {
		return nil, fmt.Errorf("%s %s metadata: %w", apiVersion, listKind, err)
	}
	l.rawSize = protowire.SizeTag(1) + protowire.SizeBytes(len(l.meta))
	var js, scratch []byte
	var w wireWriter // one stack for every item
	for i := range n {
		pb, ok := cache.Load(i)
		if !ok {
			if js, err = items(i, js[:0]); err != nil {
				return nil, err
			}
			if scratch, err = w.marshal(scratch[:0], l.item, js); err != nil {
				return nil, fmt.Errorf("%s %s item %d: %w", apiVersion, listKind, i, err)
			}
			cache.Store(i, scratch)
			pb = scratch
		}
		l.sizes[i] = len(pb)
		l.rawSize += protowire.SizeTag(2) + protowire.SizeBytes(len(pb))
	}
	return l, nil
}

// listFields returns a List message's metadata and items fields, or nils
// when the message is not shaped as every Kubernetes List is (Kubernetes'
// getStreamingListData checks the same tags before it streams).
func listFields(lm *message) (metaField, itemField *field) {
	fields := lm.desc.Fields()
	if fields.Len() != 2 {
		return nil, nil
	}
	for _, f := range lm.fields {
		switch {
		case f.desc.Number() == 1 && f.json == "metadata" && f.msg != nil && !f.desc.IsList():
			metaField = f
		case f.desc.Number() == 2 && f.json == "items" && f.msg != nil && f.desc.IsList() && f.desc.Kind() == protoreflect.MessageKind:
			itemField = f
		}
	}
	if metaField == nil || itemField == nil {
		return nil, nil
	}
	return metaField, itemField
}

// Size is the number of bytes WriteTo writes.
func (l *StreamingList) Size() int {
	tm := 2 + protowire.SizeBytes(len(l.apiVersion)) + protowire.SizeBytes(len(l.kind))
	return len(Magic) + protowire.SizeTag(1) + protowire.SizeBytes(tm) +
		protowire.SizeTag(2) + protowire.SizeBytes(l.rawSize) + 4
}

// WriteTo writes the complete protobuf body to w in chunks, each item from
// the cache or transcoded again. It stops at the first error of w or of the
// items (the client went away); an item that no longer has the size
// measured is an error too, as in Kubernetes' MarshalToWriter.
func (l *StreamingList) WriteTo(w io.Writer) (int64, error) {
	var written int64
	buf := make([]byte, 0, listChunk+listChunk/4)
	flush := func() error {
		n, err := w.Write(buf)
		written += int64(n)
		buf = buf[:0]
		return err
	}
	buf = appendEnvelopeHead(buf, l.apiVersion, l.kind, l.rawSize)
	buf = protowire.AppendTag(buf, 1, protowire.BytesType)
	buf = protowire.AppendBytes(buf, l.meta)
	var js []byte
	var err error
	var ww wireWriter // one stack for every item
	for i, size := range l.sizes {
		buf = protowire.AppendTag(buf, 2, protowire.BytesType)
		buf = protowire.AppendVarint(buf, uint64(size))
		start := len(buf)
		if pb, ok := l.cache.Load(i); ok {
			buf = append(buf, pb...)
		} else {
			if js, err = l.items(i, js[:0]); err != nil {
				return written, err
			}
			if buf, err = ww.marshal(buf, l.item, js); err != nil {
				return written, fmt.Errorf("%s %s item %d: %w", l.apiVersion, l.kind, i, err)
			}
		}
		if len(buf)-start != size {
			return written, fmt.Errorf("%s %s item %d: sized %d bytes, encoded %d", l.apiVersion, l.kind, i, size, len(buf)-start)
		}
		if len(buf) >= listChunk {
			if err := flush(); err != nil {
				return written, err
			}
			if cap(buf) > 4*listChunk {
				// One huge item grew the buffer; do not keep it for the rest.
				buf = make([]byte, 0, listChunk+listChunk/4)
			}
		}
	}
	buf = appendEnvelopeTail(buf)
	return written, flush()
}
