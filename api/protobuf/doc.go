// Package protobuf is Kubernetes' protobuf wire format for every kind
// listwatch serves, as one transcoder between an object's JSON and its
// protobuf bytes.
//
// Where it sits in the data flow: the apiserver keeps objects as JSON. A
// client that sends protobuf (client-go's default for built-in kinds,
// kubectl create) has its body turned into JSON here on the way in; a
// client that accepts protobuf gets the JSON turned into protobuf on the
// way out, for GET, LIST, Status errors and watch frames. Nothing else in
// the server knows protobuf exists.
//
//	client ══ protobuf ══► DecodeObject ──► JSON ──► apiserver, store
//	client ◄══ protobuf ══ EncodeObject, AppendWatchFrame ◄── JSON ◄──┘
//
// How: the official generated.proto files of k8s.io/api,
// k8s.io/apimachinery and (for CustomResourceDefinitions)
// k8s.io/apiextensions-apiserver, compiled into descriptors.binpb by
// tools/protogen,
// give every message and field; google.golang.org/protobuf (dynamicpb,
// protoreflect) reads and writes them. Protobuf alone does not say how a
// field looks in Kubernetes' JSON, so tools/protogen also writes fields.txt
// from the Go types: JSON names, inline structs, omitempty, which fields
// are pointers (Kubernetes' marshallers write every non-pointer field, even
// when zero, and the recordings are byte-exact only if we do too). The few
// types with their own JSON form (Time, MicroTime, Duration, Quantity,
// IntOrString, RawExtension, FieldsV1) are hand-written in kubetypes.go,
// and a CRD schema's (JSON and the three JSONSchemaPropsOr types) in
// apiextensions.go.
//
// What it mirrors in Kubernetes: the protobuf serializer of
// k8s.io/apimachinery/pkg/runtime/serializer/protobuf (the "k8s\x00" magic
// and runtime.Unknown envelope, envelope.go), the length-delimited watch
// framing of pkg/runtime/serializer/streaming and pkg/util/framer, the
// LIST written item by item of its collections.go (liststream.go), and the
// gogo-generated Marshal/Unmarshal methods of every generated.pb.go
// (fromjson.go, tojson.go: the plain way, through a dynamicpb message;
// wirewriter.go, wirereader.go: the same in one pass over the bytes, which
// is what objects in the generated code's form go through). Checked byte for byte against a real
// kube-apiserver's protobuf answers and client-go's request bodies in
// testdata/fixtures (protobuf-*.pb).
package protobuf
