package negotiation

import (
	"fmt"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/yamljson"
)

// A create or update body sent as application/yaml. kube-apiserver's YAML
// serializer converts the body to JSON first (sigs.k8s.io/yaml YAMLToJSON)
// and decodes that JSON exactly as a JSON body, so ours does the same and
// the JSON path (DecodeObject, then the handler's field validation) sees
// no difference. Only its errors quote the body as it was sent, and a key
// the YAML gives twice is a strict error of its own (the handler's
// fieldValidation decides what becomes of it). kubectl and client-go send
// JSON or protobuf; YAML bodies come from curl and hand-written clients.

// YAMLContentType is the YAML media type kube-apiserver reads.
const YAMLContentType = "application/yaml"

// YAMLToJSON converts a YAML body for res into the JSON body of the same
// object and checks that it is one (its kind and apiVersion, as
// DecodeObject does). repeated lists the keys it gives twice, in
// goyaml.v2's words (yamljson.RepeatedKeysError). YAML that does not parse
// is 400 "the object provided is unrecognized (must be of type ConfigMap):
// yaml: line 4: did not find expected key (<the body's start, in hex>)",
// as kube-apiserver's handlers/rest.go transformDecodeError words it.
func YAMLToJSON(res *registry.Resource, body []byte) (js []byte, repeated []string, err error) {
	js, repeated, err = yamljson.Convert(body)
	if err != nil {
		return nil, nil, api.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)",
			res.Kind, err, SummarizeBody(body, 30)))
	}
	js = EmptyIfNull(js) // an empty body, or ~
	if _, err := decodeObject(res, js, body); err != nil {
		return nil, nil, err
	}
	return js, repeated, nil
}
