package negotiation

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"listwatch/api"
	"listwatch/apiserver/registry"
)

// Reading a request body as what it claims to be: strict decoding, so a
// body that is not the object its path serves is a 400 and nothing
// malformed is ever stored and written back to clients.

// typeMeta is the part of a body that says what it is. It is the same
// unnamed struct as apimachinery's (pkg/runtime/serializer/json/meta.go,
// SimpleMetaFactory.Interpret), so that a body that is not an object gets
// the same words: "json: cannot unmarshal string into Go value of type
// struct { APIVersion string ... }".
type typeMeta = struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// DecodeObject reads a request body as an object of res. Like Kubernetes it
// fills in a missing kind or apiVersion, and answers 400 BadRequest for
// malformed JSON (quoting the start of the body, as
// error-400-malformed-json-body.json does) or a kind or apiVersion that does
// not belong on this path.
func DecodeObject(res *registry.Resource, body []byte) (*api.Object, error) {
	return decodeObject(res, body, body)
}

// decodeObject is DecodeObject for a body converted from sent (YAML,
// yaml.go): an error quotes the body as it was sent.
func decodeObject(res *registry.Resource, body, sent []byte) (*api.Object, error) {
	var tm typeMeta
	// json.Unmarshal checks the whole body is valid JSON before decoding,
	// so nothing malformed is ever stored and written back to clients.
	if err := json.Unmarshal(body, &tm); err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf(
			"the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %v (%s)",
			res.Kind, err, SummarizeBody(sent, 30)))
	}
	kind, apiVersion := tm.Kind, tm.APIVersion
	if kind == "" {
		kind = res.Kind
	}
	if apiVersion == "" {
		apiVersion = res.APIVersion()
	}
	cannot := func(why string) error {
		return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", kind, apiVersion, res.Kind, why))
	}
	switch {
	case apiVersion != res.APIVersion():
		return nil, cannot(fmt.Sprintf("no kind %q is registered for version %q: the path serves %s", kind, apiVersion, res.APIVersion()))
	case kind != res.Kind:
		return nil, cannot(fmt.Sprintf("the body is a %s but the path serves %s", kind, res.Name))
	}
	obj := &api.Object{}
	if err := obj.UnmarshalJSON(body); err != nil {
		return nil, cannot(err.Error())
	}
	obj.Kind, obj.APIVersion = res.Kind, res.APIVersion()
	return obj, nil
}

// EmptyIfNull reads a create or update body that is JSON null as {}:
// encoding/json decodes null into a struct as nothing at all, so
// kube-apiserver reads such a body as an empty object (whose missing name
// is then a 422), and so do we.
func EmptyIfNull(body []byte) []byte {
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		return []byte("{}")
	}
	return body
}

// SummarizeBody quotes the start of a body for an error message.
func SummarizeBody(data []byte, maxLen int) string {
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		if len(data) > maxLen {
			return string(data[:maxLen]) + " ..."
		}
		return string(data)
	default:
		if len(data) > maxLen {
			return hex.EncodeToString(data[:maxLen]) + " ..."
		}
		return hex.EncodeToString(data)
	}
}
