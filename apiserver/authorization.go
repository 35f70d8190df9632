package apiserver

import (
	"encoding/json"
	"net/http"

	"listwatch/api"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
)

// SelfSubjectAccessReviews: "may I?". kubectl auth can-i, and every tool
// that checks before it acts, POSTs a SelfSubjectAccessReview naming a verb
// and a resource; the answer is the same object with status.allowed
// filled in, and nothing is stored. Kubernetes asks its authorizers
// (pkg/registry/authorization/selfsubjectaccessreview/rest.go, Create).
// We have one: whoever got past authentication (the token, when one is
// set) may do everything, so the answer is always allowed, as a real
// server run with --authorization-mode=AlwaysAllow answers
// (v137-selfsubjectaccessreview-201.json). Only this path of the
// authorization.k8s.io group is served, and discovery does not list it:
// kubectl auth can-i needs neither.

// selfSubjectAccessReviewsPath is the one path of the review.
const selfSubjectAccessReviewsPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

// selfSubjectAccessReviews declares the review's kind, so its bodies are
// read and written, JSON or protobuf (kubectl sends protobuf), by the
// same code as every other kind's. It has no store and no watch cache.
var selfSubjectAccessReviews = &registry.Resource{
	Group: "authorization.k8s.io", Version: "v1", Name: "selfsubjectaccessreviews",
	SingularName: "selfsubjectaccessreview", Kind: "SelfSubjectAccessReview", Verbs: []string{registry.VerbCreate},
}

// serveSelfSubjectAccessReview answers a review: 201 and the review,
// allowed.
func (s *Server) serveSelfSubjectAccessReview(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		negotiation.WriteStatus(w, r, api.NewMethodNotSupported())
		return
	}
	// A review has no Table form; kube-apiserver's create handler
	// negotiates the answer's media type before it reads the body
	// (endpoints/handlers/create.go, createHandler).
	if _, err := negotiation.NegotiateOutputWithoutTable(r); err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	review, err := readReview(w, r, s)
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if err := review.Set("status", json.RawMessage(`{"allowed":true}`)); err != nil {
		negotiation.WriteError(w, r, api.NewInternalError(err))
		return
	}
	negotiation.WriteObject(w, r, http.StatusCreated, review)
}

// readReview decodes the review in the request's body, JSON, YAML or
// protobuf.
func readReview(w http.ResponseWriter, r *http.Request, s *Server) (*api.Object, error) {
	res := selfSubjectAccessReviews
	format, err := negotiation.ObjectBodyFormat(r, res)
	if err != nil {
		return nil, err
	}
	body, err := filters.ReadBody(w, r)
	if err != nil {
		return nil, err
	}
	switch format {
	case negotiation.ProtobufBody:
		return negotiation.DecodeProtobufObject(res, body, s.tracer)
	case negotiation.YAMLBody:
		if body, _, err = negotiation.YAMLToJSON(res, body); err != nil {
			return nil, err
		}
	}
	return negotiation.DecodeObject(res, body)
}
