// Package negotiation is how the server speaks on the wire apart from the
// watch stream: which representation a client accepts (JSON, a
// meta.k8s.io Table for kubectl get, or Kubernetes protobuf for client-go),
// how a response body is written (compact or pretty JSON or protobuf,
// Status errors with the right code and reason), and how a request body is
// read as what it claims to be, JSON or protobuf (through api/protobuf's
// transcoder, so every stored object is JSON).
//
// Where it sits in the data flow: at both ends of every non-watch request.
// Handlers decode bodies with DecodeObject (or DecodeProtobufObject) on
// the way in and answer with WriteObject, WriteJSON or WriteError on the
// way out; they never format bytes themselves.
//
//	body ──► DecodeObject ──► handler ──► store ──► WriteObject / WriteError ──► client
//
// Files: responses.go (Accept negotiation, writers, errors to Statuses),
// decode.go (JSON bodies), protobuf.go (protobuf bodies and responses),
// liststream.go (LISTs written item by item). protobufcache.go is our own
// machinery, saying what Kubernetes does instead (cachingObject): the
// protobuf encodings of listed objects, kept within a byte budget so a
// protobuf LIST transcodes an object once and not twice per LIST.
//
// What it mirrors in Kubernetes: k8s.io/apiserver/pkg/endpoints/handlers/
// negotiation and responsewriters (writers.go, status.go), and
// k8s.io/apimachinery/pkg/runtime/serializer (json and protobuf) with the
// generated.proto files of k8s.io/api core/v1 and apimachinery meta/v1.
package negotiation
