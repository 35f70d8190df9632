package negotiation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/store"
)

// How the server writes a response body. Kubernetes' rules, checked against
// the fixtures: compact JSON plus one "\n"; pretty-printed (2-space indent,
// no trailing newline) for ?pretty=true or a curl/Wget/browser User-Agent;
// errors as a Status; paths that are not API paths as Go's plain-text
// "404 page not found".

// JSONContentType is the type the server reads and writes for everything;
// protobuf.go adds Kubernetes protobuf for the built-in kinds.
const JSONContentType = "application/json"

// Output is what the client accepts, decided from its Accept header.
type Output struct {
	// Table: answer gets and lists with a meta.k8s.io Table of this
	// apiVersion (meta.k8s.io/v1 or v1beta1); empty for plain JSON.
	Table string
	// TableInclude is the Table rows' object, by ?includeObject=:
	// registry.IncludeMetadata (also when empty), IncludeObject or
	// IncludeNone.
	TableInclude string
	// Protobuf: the client prefers Kubernetes protobuf (client-go's
	// default for built-in kinds). Bodies the protobuf schema has no
	// message for are still written as JSON.
	Protobuf bool
	// Metadata: answer with metadata only (partial.go), as
	// PartialObjectMetadata or PartialObjectMetadataList of
	// MetadataVersion (meta.k8s.io/v1 or v1beta1); empty for the objects.
	Metadata, MetadataVersion string
}

// NegotiateOutput picks the first media range of the Accept header that the
// server can produce: JSON in any form, a Table (kubectl get asks for one
// first) or protobuf (client-go sends
// "application/vnd.kubernetes.protobuf,application/json"); a header that
// allows nothing we speak gets 406.
func NegotiateOutput(r *http.Request) (Output, error) {
	return negotiateOutput(r, true)
}

// NegotiateOutputWithoutTable is NegotiateOutput for a resource that has
// no Table form (a SelfSubjectAccessReview): a Table range is passed over
// like one we do not speak, so a client that accepts only Tables gets 406.
// kube-apiserver decides the same way in RequestScope.AllowsMediaTypeTransform
// (endpoints/handlers/rest.go): a Table only where the storage has a
// TableConvertor.
func NegotiateOutputWithoutTable(r *http.Request) (Output, error) {
	return negotiateOutput(r, false)
}

func negotiateOutput(r *http.Request, tables bool) (Output, error) {
	accept := r.Header.Get("Accept")
	if strings.TrimSpace(accept) == "" {
		return Output{}, nil
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json", "application/*", "*/*":
		case ProtobufContentType:
			// A protobuf Table (as=Table) is not something we write;
			// the next range may be.
			switch params["as"] {
			case "":
				return Output{Protobuf: true}, nil
			case PartialObjectMetadata, PartialObjectMetadataList:
				if isMetaV1(params) {
					return Output{Protobuf: true, Metadata: params["as"], MetadataVersion: "meta.k8s.io/" + params["v"]}, nil
				}
			}
			continue
		default:
			continue
		}
		switch as := params["as"]; {
		case as == "":
			return Output{}, nil
		case as == "Table" && isMetaV1(params) && tables:
			include, err := tableInclude(r)
			return Output{Table: "meta.k8s.io/" + params["v"], TableInclude: include}, err
		case (as == PartialObjectMetadata || as == PartialObjectMetadataList) && isMetaV1(params):
			return Output{Metadata: as, MetadataVersion: "meta.k8s.io/" + params["v"]}, nil
		}
	}
	return Output{}, &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusFailure,
		Message: "only the following media types are accepted: " + JSONContentType + ", " + ProtobufContentType,
		Reason:  api.ReasonNotAcceptable, Code: http.StatusNotAcceptable}
}

// tableInclude is ?includeObject= of a Table request, checked as
// k8s.io/apiserver's optionsForTransform checks it (apimachinery
// ValidateTableOptions): anything else is 400.
func tableInclude(r *http.Request) (string, error) {
	switch v := r.URL.Query().Get("includeObject"); v {
	case "", registry.IncludeMetadata, registry.IncludeObject, registry.IncludeNone:
		return v, nil
	default:
		return "", api.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: includeObject: Invalid value: %q: must be 'Metadata', 'Object', 'None', or empty", v))
	}
}

// isMetaV1 reports whether a media range's group version is meta.k8s.io
// v1 or v1beta1, where Table and PartialObjectMetadata live.
func isMetaV1(params map[string]string) bool {
	return params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1")
}

// IsPretty reports whether to indent the response: ?pretty=<true>, or no
// pretty parameter and a User-Agent of curl, Wget or a browser, as
// kube-apiserver decides.
func IsPretty(r *http.Request) bool {
	if strings.Contains(r.URL.RawQuery, "pretty") {
		if p := r.URL.Query().Get("pretty"); p != "" {
			b, _ := strconv.ParseBool(p)
			return b
		}
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}

// WriteJSON writes an encoded JSON body, pretty or compact as the request
// asks, or transcoded to protobuf when the client prefers that and the
// body's kind has a protobuf message. The body must be the caller's own
// buffer: a newline is appended.
func WriteJSON(w http.ResponseWriter, r *http.Request, code int, body []byte) {
	if out, err := NegotiateOutput(r); err == nil && out.Protobuf {
		pb, ok, err := protobufResponse(body)
		if err != nil {
			// A stored object that does not fit its kind's schema: say
			// so, rather than send bytes no typed client can read.
			st := api.NewInternalError(fmt.Errorf("encoding the response as %s: %w", ProtobufContentType, err))
			pb, _, _ = protobufResponse(st.AppendJSON(nil))
			code = http.StatusInternalServerError
		}
		if ok {
			writeProtobuf(w, code, pb)
			return
		}
	}
	WriteBody(w, code, body, IsPretty(r))
}

// WriteBody writes a JSON body, indented (and without a trailing newline)
// when pretty, else with one "\n" appended to the caller's buffer.
func WriteBody(w http.ResponseWriter, code int, body []byte, pretty bool) {
	WriteBodyAs(w, code, JSONContentType, body, pretty)
}

// WriteBodyAs is WriteBody with another JSON Content-Type (aggregated
// discovery's names its kind).
func WriteBodyAs(w http.ResponseWriter, code int, contentType string, body []byte, pretty bool) {
	if pretty {
		var buf bytes.Buffer
		if json.Indent(&buf, body, "", "  ") == nil {
			body = buf.Bytes()
		}
	} else {
		body = append(body, '\n')
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	// A write error means the client went away; there is no one to tell.
	_, _ = w.Write(body)
}

// WriteObject writes one object (get, create, update, patch, delete), or
// only its metadata when the client asked for that (partial.go).
func WriteObject(w http.ResponseWriter, r *http.Request, code int, obj *api.Object) {
	if out, err := NegotiateOutput(r); err == nil && out.Metadata != "" {
		partial, st := partialObject(out, obj)
		if st != nil {
			WriteStatus(w, r, st)
			return
		}
		obj = partial
	}
	WriteJSON(w, r, code, obj.AppendJSON(make([]byte, 0, 1024)))
}

// WriteStatus writes a Status with its code (a Success Status without a
// code is a 200), and a Retry-After header when it asks for a delay.
func WriteStatus(w http.ResponseWriter, r *http.Request, st *api.Status) {
	code := int(st.Code)
	if code == 0 {
		code = http.StatusOK
		if st.Status == api.StatusFailure {
			code = http.StatusInternalServerError
		}
	}
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	WriteJSON(w, r, code, st.AppendJSON(make([]byte, 0, 256)))
}

// WriteError answers with the Status in err's chain, or the Status that
// Kubernetes would give for a storage error.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	WriteStatus(w, r, StatusFor(err))
}

// StatusFor maps an error to a Status. Handlers translate the store's
// expected errors (not found, conflict, ...) where they know the resource
// and name; what reaches here unexplained is an internal error.
func StatusFor(err error) *api.Status {
	if st, ok := api.StatusOf(err); ok {
		return st
	}
	switch {
	case errors.Is(err, store.ErrClosed):
		return api.NewServiceUnavailable("the server is shutting down")
	case errors.Is(err, context.DeadlineExceeded):
		return api.NewTimeout("request did not complete within the allowed duration", 0)
	case errors.Is(err, context.Canceled):
		return api.NewServiceUnavailable("the request was cancelled")
	}
	return api.NewInternalError(err)
}

// NotFoundText is Go's plain "404 page not found", which kube-apiserver
// answers for paths outside the API and unknown groups (error-404-*.txt).
func NotFoundText(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }

// SuccessStatus is the answer to a delete of a resource that does not
// return the deleted object (delete-200.json): status Success, no code.
func SuccessStatus(res *registry.Resource, obj *api.Object) *api.Status {
	return &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusSuccess,
		Details: &api.StatusDetails{Name: obj.Metadata.Name, Group: res.Group, Kind: res.Name, UID: obj.Metadata.UID}}
}

// WithKind returns obj with kind and apiVersion set, copying only if needed
// (stored objects carry both; objects are shared and read-only).
func WithKind(res *registry.Resource, obj *api.Object) *api.Object {
	if obj.Kind == res.Kind && obj.APIVersion == res.APIVersion() {
		return obj
	}
	c := *obj
	c.Kind, c.APIVersion = res.Kind, res.APIVersion()
	return &c
}

// AsListItem returns obj without kind and apiVersion, as list items are
// written. The copy is shallow: encoding only reads it.
func AsListItem(obj *api.Object) *api.Object {
	if obj.Kind == "" && obj.APIVersion == "" {
		return obj
	}
	c := *obj
	c.Kind, c.APIVersion = "", ""
	return &c
}

// MustJSON encodes v, which must be a plain struct (or map) of strings,
// numbers and such: documents built once at start and debug views.
func MustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("apiserver: encoding a fixed document: " + err.Error())
	}
	return b
}
