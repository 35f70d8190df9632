package handlers

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"listwatch/api"
	"listwatch/apiserver/registry"
)

// The query of a list or watch, parsed and checked as kube-apiserver does
// (handlers/get.go listOpts, meta/internalversion/validation): numbers that
// do not parse are 400, forbidden combinations are 422 Invalid ListOptions
// naming the field, and selectors that do not parse are 400. A
// resourceVersion that is not a number is noticed only in the storage
// layer: a LIST's is 400 BadRequest "invalid resource version: ..."
// (storage.ValidateListOptions, which kube-apiserver 1.37's
// cacher/delegator.go GetList calls first), while a GET's or a WATCH's is,
// surprisingly, a 500 (error-500-watch-bad-rv.json): the versioner's
// InvalidError reaches the client as an internal error.

// listParams is a list or watch request's query.
type listParams struct {
	watch bool
	// resourceVersion is the raw ?resourceVersion ("" when absent).
	resourceVersion string
	rvMatch         string
	limit           int64
	continueToken   string
	label           api.LabelSelector
	field           api.FieldSelector
	// fieldMatch matches field against the resource's own selectable
	// fields (forResource); nil: metadata fields only.
	fieldMatch func(*api.Object) bool
	// timeoutSeconds is nil when absent.
	timeoutSeconds    *int64
	allowBookmarks    bool
	sendInitialEvents *bool
}

// queryBool parses a boolean parameter like Kubernetes: absent, "0" and
// "false" (any case) are false, anything else, even "", is true.
func queryBool(q url.Values, key string) (value, present bool) {
	vs, ok := q[key]
	if !ok || len(vs) == 0 {
		return false, false
	}
	return !(vs[0] == "0" || strings.EqualFold(vs[0], "false")), true
}

// queryInt parses an integer parameter; a bad one is 400 with Go's message,
// as in Kubernetes.
func queryInt(q url.Values, key string) (*int64, error) {
	vs, ok := q[key]
	if !ok || len(vs) == 0 {
		return nil, nil
	}
	n, err := strconv.ParseInt(vs[0], 10, 64)
	if err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	return &n, nil
}

// listOptionsKind is the kind 422s about the query are reported against.
var listOptionsKind = api.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}

func forbidden(field, detail string) api.StatusCause {
	return api.StatusCause{Type: api.CauseFieldValueForbidden, Field: field, Message: "Forbidden: " + detail}
}

func notSupported(field, value string, supported ...string) api.StatusCause {
	quoted := make([]string, len(supported))
	for i, s := range supported {
		quoted[i] = strconv.Quote(s)
	}
	return api.StatusCause{Type: api.CauseFieldValueNotSupported, Field: field,
		Message: fmt.Sprintf("Unsupported value: %q: supported values: %s", value, strings.Join(quoted, ", "))}
}

// parseListParams reads the query of a list (watch false) or watch. name is
// the object name of a watch on one object (the legacy
// /watch/namespaces/{ns}/{resource}/{name} path or ?watch on an object),
// which becomes fieldSelector=metadata.name=<name>.
func parseListParams(q url.Values, watch bool, name string) (listParams, error) {
	p := listParams{watch: watch}
	if w, ok := queryBool(q, "watch"); ok && w {
		p.watch = true
	}
	p.resourceVersion = q.Get("resourceVersion")
	p.rvMatch = q.Get("resourceVersionMatch")
	p.continueToken = q.Get("continue")
	p.allowBookmarks, _ = queryBool(q, "allowWatchBookmarks")
	if b, ok := queryBool(q, "sendInitialEvents"); ok {
		p.sendInitialEvents = &b
	}
	limit, err := queryInt(q, "limit")
	if err != nil {
		return p, err
	}
	if limit != nil && *limit > 0 {
		p.limit = *limit
	}
	if p.timeoutSeconds, err = queryInt(q, "timeoutSeconds"); err != nil {
		return p, err
	}
	if t := p.timeoutSeconds; t != nil && *t < 0 {
		return p, api.NewBadRequest(fmt.Sprintf("timeoutSeconds: Invalid value: %d: must be greater than or equal to 0", *t))
	}

	if causes := p.validate(); len(causes) > 0 {
		return p, api.NewInvalid(listOptionsKind, "", causes)
	}

	if p.label, err = api.ParseLabelSelectorLimited(q.Get("labelSelector")); err != nil {
		return p, api.NewBadRequest(err.Error())
	}
	fieldSelector := q.Get("fieldSelector")
	if name != "" {
		// A watch on one object is a watch of its collection filtered by
		// name; a field selector naming another object is an error.
		if fieldSelector != "" {
			if selected, ok := exactNameTerm(fieldSelector); !ok || selected != name {
				return p, api.NewBadRequest("fieldSelector metadata.name doesn't match requested name")
			}
		} else {
			fieldSelector = "metadata.name=" + name
		}
	}
	if p.field, err = api.ParseFieldSelectorLimited(fieldSelector); err != nil {
		return p, api.NewBadRequest(err.Error())
	}
	return p, nil
}

// validate returns the 422 causes for forbidden combinations, with the
// messages of Kubernetes' ValidateListOptions.
func (p *listParams) validate() []api.StatusCause {
	var causes []api.StatusCause
	const rvm = "resourceVersionMatch"
	match := p.rvMatch
	if !p.watch {
		if match != "" {
			if p.resourceVersion == "" {
				causes = append(causes, forbidden(rvm, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
			}
			if p.continueToken != "" {
				causes = append(causes, forbidden(rvm, "resourceVersionMatch is forbidden when continue is provided"))
			}
			if match != api.ResourceVersionMatchExact && match != api.ResourceVersionMatchNotOlderThan {
				causes = append(causes, notSupported(rvm, match, api.ResourceVersionMatchExact, api.ResourceVersionMatchNotOlderThan, ""))
			}
			if match == api.ResourceVersionMatchExact && p.resourceVersion == "0" {
				causes = append(causes, forbidden(rvm, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
			}
		}
		if p.sendInitialEvents != nil {
			causes = append(causes, forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
		}
		return causes
	}
	if p.sendInitialEvents != nil && match != api.ResourceVersionMatchNotOlderThan {
		causes = append(causes, forbidden(rvm, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
	}
	if match != "" {
		if p.sendInitialEvents == nil {
			causes = append(causes, forbidden(rvm, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		if match != api.ResourceVersionMatchNotOlderThan {
			causes = append(causes, notSupported(rvm, match, api.ResourceVersionMatchNotOlderThan))
		}
		if p.continueToken != "" {
			causes = append(causes, forbidden(rvm, "resourceVersionMatch is forbidden when continue is provided"))
		}
	}
	return causes
}

// exactNameTerm finds the "metadata.name=x" (or "==") term of a raw field
// selector.
func exactNameTerm(selector string) (string, bool) {
	for term := range strings.SplitSeq(selector, ",") {
		term = strings.TrimSpace(term)
		if strings.Contains(term, "!=") {
			continue
		}
		k, v, ok := strings.Cut(term, "=")
		if !ok || strings.TrimSpace(k) != "metadata.name" {
			continue
		}
		return strings.TrimSpace(strings.TrimPrefix(v, "=")), true
	}
	return "", false
}

// parseResourceVersion parses a resourceVersion query value. A value that is
// not a decimal revision is the 500 a real kube-apiserver answers to a GET
// or a WATCH, word for word (a LIST wraps it: listResourceVersion).
func parseResourceVersion(rv string) (int64, error) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err == nil && n > math.MaxInt64 {
		err = fmt.Errorf("strconv.ParseUint: parsing %q: %w", rv, strconv.ErrRange)
	}
	if err != nil {
		return 0, &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusFailure,
			Message: fmt.Sprintf("resourceVersion: Invalid value: %q: %v", rv, err),
			Code:    500}
	}
	return int64(n), nil
}

// listResourceVersion parses a LIST's resourceVersion: the same parse, but
// a value that is not a number is 400 BadRequest, "invalid resource
// version: " and the versioner's message, as storage.ValidateListOptions
// (k8s.io/apiserver/pkg/storage/interfaces.go) answers it.
func listResourceVersion(rv string) (int64, error) {
	n, err := parseResourceVersion(rv)
	var st *api.Status
	if errors.As(err, &st) {
		return 0, api.NewBadRequest("invalid resource version: " + st.Message)
	}
	return n, err
}

// matcher returns the filter a list or watch applies: namespace (for a
// namespaced path), labels and fields.
func (p *listParams) matcher(ns string) func(*api.Object) bool {
	label, field := p.label, p.field
	return func(o *api.Object) bool {
		if ns != "" && o.Metadata.Namespace != ns {
			return false
		}
		if !label.Matches(o.Metadata.Labels) {
			return false
		}
		if p.fieldMatch != nil {
			return p.fieldMatch(o)
		}
		return field.MatchesObject(o)
	}
}

// forResource checks the field selector against the fields res may be
// selected by (400 for any other) and matches them (registry/fieldselectors.go).
func (p *listParams) forResource(res *registry.Resource) error {
	if err := res.CheckFieldSelector(p.field); err != nil {
		return err
	}
	p.fieldMatch = res.FieldMatcher(p.field)
	return nil
}

// selectorsEmpty reports whether the request filters by neither labels nor
// fields; only then does a page report remainingItemCount.
func (p *listParams) selectorsEmpty() bool { return p.label.Empty() && p.field.Empty() }
