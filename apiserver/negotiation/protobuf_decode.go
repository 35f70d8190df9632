package negotiation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
)

// Kubernetes protobuf request bodies, for the few kinds that need them.
//
// This server speaks JSON, but kubectl's create generators ("kubectl create
// configmap", "kubectl create secret generic", "kubectl create namespace")
// build a typed object and POST it with client-go's default content type,
// application/vnd.kubernetes.protobuf; kubectl offers no flag to change
// that. So for v1 ConfigMaps, Secrets and Namespaces, and only for them, we
// read the protobuf body and turn it into the JSON body the same object
// would have been sent as; from there it takes the JSON path (DecodeObject)
// and nothing downstream can tell the difference. A protobuf body of any
// other kind is still 415 with the list of types we accept.
//
// The body is what k8s.io/apimachinery/pkg/runtime/serializer/protobuf
// writes: the 4-byte magic "k8s\x00", then a runtime.Unknown message
//
//	Unknown  { TypeMeta typeMeta = 1; bytes raw = 2; string contentEncoding = 3; string contentType = 4 }
//	TypeMeta { string apiVersion = 1; string kind = 2 }
//
// whose raw field is the object's own message: protobuf_core.go reads the
// kinds (k8s.io/api/core/v1/generated.proto) and protobuf_meta.go their
// metadata (apimachinery's pkg/apis/meta/v1/generated.proto), each decoder
// quoting the field numbers it reads. The wire format itself is
// protobuf_wire.go.
//
// The pb* structs there carry the JSON tags of the Kubernetes Go types they
// stand for, field for field and in the same order, so encoding/json writes
// exactly what kube-apiserver's JSON serializer writes for that object:
// "creationTimestamp":null, omitted empty fields, the same escaping; map
// fields write themselves with sorted keys and []byte values in base64, as
// encoding/json does. The golden tests in protobuf_test.go check it byte
// for byte against the real serializers.

// ProtobufContentType is Kubernetes' protobuf media type.
const ProtobufContentType = "application/vnd.kubernetes.protobuf"

// protobufMagic starts every Kubernetes protobuf body.
var protobufMagic = []byte("k8s\x00")

// BodyFormat is how a create or update body is encoded.
type BodyFormat int

const (
	// JSONBody is a JSON body (or one without a Content-Type).
	JSONBody BodyFormat = iota
	// ProtobufBody is a Kubernetes protobuf body of a kind we read.
	ProtobufBody
)

// protobufTranscoder decodes one kind's protobuf message into the value
// whose JSON encoding is that object's JSON.
type protobufTranscoder func(msg []byte) (any, error)

// protobufTranscoderFor returns the decoder for the kinds we read as
// protobuf, or nil.
func protobufTranscoderFor(apiVersion, kind string) protobufTranscoder {
	if apiVersion != "v1" {
		return nil
	}
	switch kind {
	case "ConfigMap":
		return decodeConfigMap
	case "Secret":
		return decodeSecret
	case "Namespace":
		return decodeNamespace
	}
	return nil
}

// protobufKindsText names the kinds above, for error messages.
const protobufKindsText = "v1 ConfigMap, Secret and Namespace"

// ObjectBodyFormat decides, from the Content-Type alone, whether a create
// or update body for res can be read: JSON (or no Content-Type, which
// Kubernetes reads as JSON) always, protobuf only on the paths of the kinds
// above. Anything else is 415 naming the types this path accepts.
func ObjectBodyFormat(r *http.Request, res *registry.Resource) (BodyFormat, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return JSONBody, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	protobufPath := protobufTranscoderFor(res.APIVersion(), res.Kind) != nil
	switch {
	case err == nil && mt == JSONContentType:
		return JSONBody, nil
	case err == nil && mt == ProtobufContentType && protobufPath:
		return ProtobufBody, nil
	case err == nil && mt == ProtobufContentType:
		return 0, unsupportedProtobuf(ct, res.APIVersion(), res.Kind)
	case protobufPath:
		return 0, api.NewUnsupportedMediaType(ct, []string{JSONContentType, ProtobufContentType})
	default:
		return 0, api.NewUnsupportedMediaType(ct, []string{JSONContentType})
	}
}

// unsupportedProtobuf is the 415 for a protobuf body of a kind we cannot
// read; it says what to do instead.
func unsupportedProtobuf(ct, apiVersion, kind string) *api.Status {
	st := api.NewUnsupportedMediaType(ct, []string{JSONContentType})
	st.Message += fmt.Sprintf(" (this server reads %s only for %s, not %s %s; client-go users set ContentType: %q in rest.Config)",
		ProtobufContentType, protobufKindsText, apiVersion, kind, JSONContentType)
	return st
}

// DecodeProtobufObject reads a protobuf create or update body for res: it
// converts the body to JSON and decodes that exactly as a JSON body.
func DecodeProtobufObject(res *registry.Resource, body []byte, tracer *narrate.Tracer) (*api.Object, error) {
	js, err := protobufToJSON(res, body)
	if err != nil {
		return nil, err
	}
	if tracer.Enabled() {
		tracer.Printf(narrate.HTTP, "read a %d-byte protobuf %s body as %d bytes of JSON", len(body), res.Kind, len(js))
	}
	return DecodeObject(res, js)
}

// protobufToJSON converts a Kubernetes protobuf body for res into the JSON
// body of the same object. Malformed input is 400 BadRequest, worded as
// kube-apiserver words decode errors (handlers/rest.go
// transformDecodeError); a well-formed body of a kind we cannot read is 415.
// A kind that is readable but wrong for the path is left for DecodeObject
// to refuse, as it refuses the same JSON.
func protobufToJSON(res *registry.Resource, body []byte) ([]byte, error) {
	env, err := readEnvelope(body)
	if err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)",
			res.Kind, err, SummarizeBody(body, 30)))
	}
	// A missing kind or apiVersion defaults to the path's, as for JSON
	// (the protobuf serializer's copyKindDefaults).
	if env.kind == "" {
		env.kind = res.Kind
	}
	if env.apiVersion == "" {
		env.apiVersion = res.APIVersion()
	}
	decode := protobufTranscoderFor(env.apiVersion, env.kind)
	if decode == nil {
		return nil, unsupportedProtobuf(ProtobufContentType, env.apiVersion, env.kind)
	}
	cannot := func(err error) error {
		return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", env.kind, env.apiVersion, res.Kind, err))
	}
	obj, err := decode(env.raw)
	if err != nil {
		return nil, cannot(fmt.Errorf("protobuf: %w", err))
	}
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, cannot(err)
	}
	return js, nil
}

// envelope is the decoded runtime.Unknown around an object.
type envelope struct {
	apiVersion, kind string
	raw              []byte
}

// errNotProtobuf is a body without the magic prefix.
var errNotProtobuf = errors.New(`provided data does not appear to be a protobuf message, expected prefix "k8s\x00"`)

// errEmptyProtobuf is a body that is only the magic prefix, or nothing.
var errEmptyProtobuf = errors.New("empty body")

// readEnvelope checks the magic and reads the runtime.Unknown. Its
// contentEncoding and contentType are ignored, as Kubernetes ignores them
// when decoding a request.
func readEnvelope(body []byte) (envelope, error) {
	var env envelope
	switch {
	case len(body) == 0 || bytes.Equal(body, protobufMagic):
		return env, errEmptyProtobuf
	case !bytes.HasPrefix(body, protobufMagic):
		return env, errNotProtobuf
	}
	err := eachField(body[len(protobufMagic):], func(r *wireReader, field int32, wt wireType) (bool, error) {
		switch field {
		case 1:
			msg, err := r.readBytes("typeMeta", wt)
			if err != nil {
				return true, err
			}
			return true, eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
				var err error
				switch field {
				case 1:
					env.apiVersion, err = r.readString("typeMeta.apiVersion", wt)
				case 2:
					env.kind, err = r.readString("typeMeta.kind", wt)
				default:
					return false, nil
				}
				return true, err
			})
		case 2:
			raw, err := r.readBytes("raw", wt)
			env.raw = raw
			return true, err
		case 3, 4:
			_, err := r.readBytes("contentEncoding/contentType", wt)
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return envelope{}, fmt.Errorf("protobuf envelope: %w", err)
	}
	return env, nil
}
