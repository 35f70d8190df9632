package patch

import (
	"encoding/json"
	"strings"

	"listwatch/api"
)

// Before it applies a patch, kube-apiserver decodes it into Go values
// (k8s.io/apiserver/pkg/endpoints/handlers/patch.go): a JSON patch into
// []jsonPatchOp and a merge patch into map[string]interface{}, when the
// fieldValidation directive is Warn (the default) or Strict
// (jsonPatcher.applyJSPatch), and a strategic merge patch into
// map[string]interface{} always (strategicPatchObject). A patch that is
// valid JSON can still fail there: a number too large for a float64
// (1e999999), or an operation whose "path" is not a string. That is a 400
// BadRequest, before anything is applied:
//
//	error decoding patch: json: cannot unmarshal number 1e999999 into Go value of type float64
//
// kube-apiserver decodes with sigs.k8s.io/json, a fork of encoding/json
// whose messages are encoding/json's, so encoding/json gives the same
// words; only the package in a type's name differs, and jsonPatchMessage
// puts kube-apiserver's back.

// jsonPatchOp is one JSON patch operation as kube-apiserver decodes it to
// check the patch (handlers/patch.go, type jsonPatchOp). Its name appears
// in messages ("Go struct field jsonPatchOp.value of type float64").
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// checkJSONPatchDecodes decodes a JSON patch as kube-apiserver does with
// the directive Warn or Strict.
func checkJSONPatchDecodes(body []byte) error {
	var ops []jsonPatchOp
	if err := json.Unmarshal(body, &ops); err != nil {
		return api.NewBadRequest("error decoding patch: " + jsonPatchMessage(err))
	}
	return nil
}

// jsonPatchMessage words a decoding error as kube-apiserver's, where the
// type lives in package handlers: "cannot unmarshal object into Go value
// of type []handlers.jsonPatchOp".
func jsonPatchMessage(err error) string {
	return strings.ReplaceAll(err.Error(), "patch.jsonPatchOp", "handlers.jsonPatchOp")
}

// checkMergePatchDecodes decodes a JSON merge patch as kube-apiserver does
// with the directive Warn or Strict.
func checkMergePatchDecodes(body []byte) error {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return api.NewBadRequest("error decoding patch: " + err.Error())
	}
	return nil
}

// checkStrategicPatchDecodes decodes a strategic merge patch as
// kube-apiserver does whatever the directive; its message has no prefix.
func checkStrategicPatchDecodes(body []byte) error {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return api.NewBadRequest(err.Error())
	}
	return nil
}
