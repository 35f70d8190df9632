package negotiation

import (
	"encoding/json"
	"fmt"
	"net/http"

	"listwatch/api"
)

// Metadata only: a client that needs no more than an object's metadata
// (client-go's metadata client, which the garbage collector's and the
// namespace controller's informers use for every resource) asks for
//
//	Accept: application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,
//	        application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json
//
// and gets a meta.k8s.io PartialObjectMetadataList: each item only kind
// PartialObjectMetadata, apiVersion meta.k8s.io/v1 and the object's
// metadata. A GET and each watch event's object are a PartialObjectMetadata
// (as=PartialObjectMetadata). Asking for the list form of one object, or
// the other way round, is 406. Kubernetes: handlers/response.go
// (doTransformObject, asPartialObjectMetadata, asPartialObjectMetadataList).

// The two kinds of the metadata-only answers.
const (
	PartialObjectMetadata     = "PartialObjectMetadata"
	PartialObjectMetadataList = "PartialObjectMetadataList"
)

// PartialObject is obj as a PartialObjectMetadata of apiVersion
// (meta.k8s.io/v1 or v1beta1).
func PartialObject(obj *api.Object, apiVersion string) *api.Object {
	return &api.Object{Kind: PartialObjectMetadata, APIVersion: apiVersion, Metadata: obj.Metadata}
}

// WritePartialList answers a LIST asked for as=PartialObjectMetadataList.
func WritePartialList(w http.ResponseWriter, r *http.Request, out Output, meta api.ListMeta, items []*api.Object) {
	if out.Metadata != PartialObjectMetadataList {
		WriteStatus(w, r, partialNotAcceptable(fmt.Sprintf("you requested %s, but the requested object is a list", out.Metadata)))
		return
	}
	l := api.List{APIVersion: out.MetadataVersion, Kind: PartialObjectMetadataList, Metadata: meta, Items: make([]*api.Object, len(items))}
	for i, o := range items {
		l.Items[i] = PartialObject(o, out.MetadataVersion)
	}
	WriteJSON(w, r, http.StatusOK, l.AppendJSON(make([]byte, 0, 256+256*len(items))))
}

// partialObject is what WriteObject writes for a request that asked for
// metadata only: obj's PartialObjectMetadata, or a 406 for one that asked
// for a list.
func partialObject(out Output, obj *api.Object) (*api.Object, *api.Status) {
	if out.Metadata != PartialObjectMetadata {
		return nil, partialNotAcceptable(fmt.Sprintf("you requested %s, but the requested object is not a list", out.Metadata))
	}
	return PartialObject(obj, out.MetadataVersion), nil
}

// PartialWatchFrame turns a JSON watch frame's object into its
// PartialObjectMetadata; an ERROR event's Status passes unchanged.
func PartialWatchFrame(apiVersion string) func(jsonFrame []byte) []byte {
	return func(frame []byte) []byte {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		var o api.Object
		if json.Unmarshal(frame, &ev) != nil || ev.Type == string(api.Error) || o.UnmarshalJSON(ev.Object) != nil {
			return frame
		}
		out := append([]byte(`{"type":"`), ev.Type...)
		out = append(out, `","object":`...)
		out = PartialObject(&o, apiVersion).AppendJSON(out)
		return append(out, "}\n"...)
	}
}

// partialNotAcceptable is the 406 of a metadata-only request the answer
// cannot take that form for.
func partialNotAcceptable(msg string) *api.Status {
	return &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusFailure,
		Message: msg, Reason: api.ReasonNotAcceptable, Code: http.StatusNotAcceptable}
}
