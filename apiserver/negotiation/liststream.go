package negotiation

import (
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
// If the client goes away the encoding stops at the next chunk.
func WriteList(w http.ResponseWriter, r *http.Request, kind, apiVersion string, meta api.ListMeta, items []*api.Object) {
	// A pretty answer, and a protobuf one (whose envelope starts with the
	// length of everything after it), are built whole.
	out, err := NegotiateOutput(r)
	if IsPretty(r) || (err == nil && out.Protobuf && protobuf.Default().Knows(apiVersion, kind)) {
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
