package negotiation

import (
	"mime"
	"net/http"

	"listwatch/api"
	"listwatch/api/protobuf"
	"listwatch/apiserver/registry"
)

// Which encoding a request body is in, from its Content-Type. A create,
// update or DeleteOptions body may be JSON (or have no Content-Type, which
// Kubernetes reads as JSON), YAML (yaml.go) or, for a kind the protobuf
// schema knows, protobuf (protobuf.go). Kubernetes: the serializers
// NegotiateInputSerializer chooses among (k8s.io/apiserver v0.37.2
// pkg/endpoints/handlers/negotiation/negotiate.go), which are those of
// the resource's codec factory (k8s.io/apimachinery v0.37.2
// pkg/runtime/serializer/codec_factory.go: JSON, YAML, protobuf).

// BodyFormat is how a request body is encoded.
type BodyFormat int

const (
	// JSONBody is a JSON body (or one without a Content-Type).
	JSONBody BodyFormat = iota
	// YAMLBody is an application/yaml body, read as JSON once converted.
	YAMLBody
	// ProtobufBody is a Kubernetes protobuf body of a kind we read.
	ProtobufBody
)

// acceptedBodyTypes are the media types a 415 names. kube-apiserver 1.37.2
// names these three for every resource, custom resources too, although it
// cannot read a custom resource's body as protobuf (sent one, it drops the
// connection without an answer); ours answers such a body with this 415.
var acceptedBodyTypes = []string{JSONContentType, YAMLContentType, ProtobufContentType}

// ObjectBodyFormat decides, from the Content-Type alone, whether a create
// or update body for res can be read: JSON and YAML always, protobuf for
// every kind the protobuf schema knows (not custom resources). Anything
// else is 415.
func ObjectBodyFormat(r *http.Request, res *registry.Resource) (BodyFormat, error) {
	return BodyFormatOf(r, protobuf.Default().Knows(res.APIVersion(), res.Kind))
}

// BodyFormatOf is ObjectBodyFormat for a body whose kind is known in
// advance (DeleteOptions): protobufOK says whether protobuf is readable.
func BodyFormatOf(r *http.Request, protobufOK bool) (BodyFormat, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return JSONBody, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && mt == JSONContentType:
		return JSONBody, nil
	case err == nil && mt == YAMLContentType:
		return YAMLBody, nil
	case err == nil && mt == ProtobufContentType && protobufOK:
		return ProtobufBody, nil
	}
	return 0, api.NewUnsupportedMediaType(ct, acceptedBodyTypes)
}
