package negotiation

import (
	"fmt"
	"net/http"

	"listwatch/api"
	"listwatch/api/protobuf"
)

// WriteList answers a LIST with 200 and the list's JSON, encoded item by
// item (api.ListWriter) and sent in chunks as it goes, so a LIST of 50,000
// objects holds one 64 KiB buffer instead of its whole 50 MB body
// (kube-apiserver 1.33 streams its JSON list encoding for the same reason;
// before it, 64 parallel LISTs held 9.5 GB here: docs/performance-limits.md). The body is
// byte for byte what WriteJSON would send, without a Content-Length. A
// pretty (indented) answer, for curl and browsers, is still built whole.
// A client that prefers protobuf gets it streamed item by item too
// (writeProtobufList), its items' encodings remembered in enc (which may
// be nil). If the client goes away the encoding stops at the next item.
func WriteList(w http.ResponseWriter, r *http.Request, kind, apiVersion string, meta api.ListMeta, items []*api.Object, enc *ProtobufEncodings) {
	if out, err := NegotiateOutput(r); err == nil && out.Protobuf && protobuf.Default().Knows(apiVersion, kind) {
		writeProtobufList(w, r, kind, apiVersion, meta, items, enc)
		return
	}
	// A pretty answer, for curl and browsers, is built whole.
	if IsPretty(r) {
		l := api.List{APIVersion: apiVersion, Kind: kind, Metadata: meta, Items: make([]*api.Object, len(items))}
		for i, o := range items {
			l.Items[i] = AsListItem(o)
		}
		WriteJSON(w, r, http.StatusOK, l.AppendJSON(make([]byte, 0, 256+512*len(items))))
		return
	}
	w.Header().Set("Content-Type", JSONContentType)
	w.WriteHeader(http.StatusOK)
	lw := api.NewListWriter(w, kind, apiVersion, meta, 0)
	for _, o := range items {
		if r.Context().Err() != nil {
			return // the client is gone: no one reads the rest
		}
		item := *o // list items carry no kind or apiVersion; a shallow copy on the stack
		item.Kind, item.APIVersion = "", ""
		if lw.Item(&item) != nil {
			return
		}
	}
	_ = lw.Close() // a write error means the client went away
}

// writeProtobufList streams a protobuf LIST as kube-apiserver 1.37 does
// (protobuf.StreamingList): the envelope starts with the length of the
// whole list, so every item's size is learnt first, from enc or by
// transcoding it (enc then keeps the encoding if its budget allows), and
// then it is written, from enc or transcoded again. An item that does not
// fit its kind's schema is found in the first pass, before anything is
// written, and answered with the 500 WriteJSON gives for a whole body.
func writeProtobufList(w http.ResponseWriter, r *http.Request, kind, apiVersion string, meta api.ListMeta, items []*api.Object, enc *ProtobufEncodings) {
	itemJSON := func(i int, dst []byte) ([]byte, error) {
		if err := r.Context().Err(); err != nil {
			return nil, err // the client is gone: no one reads the rest
		}
		item := *items[i] // list items carry no kind or apiVersion; a shallow copy on the stack
		item.Kind, item.APIVersion = "", ""
		return item.AppendJSON(dst), nil
	}
	var cache protobuf.ItemCache
	if enc != nil {
		cache = listItemCache{c: enc, items: items, apiVersion: apiVersion, kind: kind}
	}
	l, err := protobuf.Default().NewStreamingList(apiVersion, kind, MustJSON(meta), len(items), itemJSON, cache)
	if r.Context().Err() != nil {
		return
	}
	if err != nil {
		st := api.NewInternalError(fmt.Errorf("encoding the response as %s: %w", ProtobufContentType, err))
		pb, _, _ := protobufResponse(st.AppendJSON(nil))
		writeProtobuf(w, http.StatusInternalServerError, pb)
		return
	}
	w.Header().Set("Content-Type", ProtobufContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = l.WriteTo(w) // an error means the client went away
}
