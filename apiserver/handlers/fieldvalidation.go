package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/yamljson"
)

// Typed bodies and ?fieldValidation. Every object of a built-in kind that
// is created, updated or patched goes through registry's Conform before it
// is stored: a wrongly typed value is refused, unknown fields are dropped,
// invalid UTF-8 is replaced. What the client hears about dropped fields is
// its choice (metav1.FieldValidation*, handlers/rest.go and patch.go):
//
//	Ignore  dropped silently
//	Warn    dropped, one `Warning: 299 - "unknown field \"foo\""` header
//	        each (the default without the parameter, fieldvalidation-*.json)
//	Strict  the request fails: 400 BadRequest for create and update, 422
//	        Invalid on field "patch" for a patch (kubectl always asks Strict)
//
// A wrongly typed value always fails: 400 "ConfigMap in version "v1"
// cannot be handled as a ConfigMap: json: cannot unmarshal ..." for create
// and update, 422 Invalid on field "patch" for every patch type, as
// kube-apiserver's patchers say it.
//
// Server-side apply has rules of its own (apply.go): a custom resource's
// undeclared field fails whatever the directive, and the directive
// governs the keys its YAML repeats.

// The fieldValidation directives.
const (
	fieldValidationIgnore = "Ignore"
	fieldValidationWarn   = "Warn"
	fieldValidationStrict = "Strict"
)

// fieldValidation reads ?fieldValidation; options names the options kind in
// the 422 for a value that is none of the directives (CreateOptions,
// UpdateOptions, PatchOptions).
func fieldValidation(r *http.Request, options string) (string, error) {
	v := r.URL.Query().Get("fieldValidation")
	switch v {
	case "":
		return fieldValidationWarn, nil
	case fieldValidationIgnore, fieldValidationWarn, fieldValidationStrict:
		return v, nil
	}
	return "", api.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: options}, "", []api.StatusCause{
		api.FieldNotSupported("fieldValidation", v, []string{"", fieldValidationIgnore, fieldValidationStrict, fieldValidationWarn})})
}

// conformBody checks a create or update body (JSON) of res and returns it
// pruned, adding Warning headers to w as the directive says. repeated are
// the keys a YAML body gave twice (yamljson.Convert): a strict error
// before the unknown fields, and under Warn one warning each, as
// kube-apiserver's YAML serializer and create.go's
// addStrictDecodingWarnings report them.
func conformBody(w http.ResponseWriter, res *registry.Resource, body []byte, directive string, repeated []string) ([]byte, error) {
	c, err := res.Conform(body)
	cannot := func(why string) error {
		// The version alone, not the group: "Deployment in version "v1""
		// (handlers/rest.go, transformDecodeError).
		return api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", res.Kind, res.Version, res.Kind, why))
	}
	if err != nil {
		return nil, cannot(err.Error())
	}
	strict := c.Strict
	if len(repeated) > 0 {
		strict = append([]string{yamljson.RepeatedKeysError(repeated)}, strict...)
	}
	if len(strict) > 0 {
		switch directive {
		case fieldValidationStrict:
			return nil, cannot(strictDecodingError(strict))
		case fieldValidationWarn:
			addWarnings(w, repeated)
			addWarnings(w, c.Strict)
		}
	}
	return c.JSON, nil
}

// conformPatched checks the result of applying a patch. It returns the
// pruned object and the warnings to send once the patch sticks (a patch
// may be applied more than once, after a conflict).
func conformPatched(res *registry.Resource, patched []byte, directive string) ([]byte, []string, error) {
	c, err := res.Conform(patched)
	invalid := func(why string) error {
		return api.NewInvalid(api.GroupKind{}, "", []api.StatusCause{api.FieldInvalid("patch", string(patched), why)})
	}
	if err != nil {
		return nil, nil, invalid(err.Error())
	}
	if len(c.Strict) == 0 || directive == fieldValidationIgnore {
		return c.JSON, nil, nil
	}
	if directive == fieldValidationStrict {
		return nil, nil, invalid(strictDecodingError(c.Strict))
	}
	return c.JSON, c.Strict, nil
}

// strictDecodingError words the strict errors as runtime.strictDecodingError.
func strictDecodingError(errs []string) string {
	return "strict decoding error: " + strings.Join(errs, ", ")
}

// addWarnings adds one RFC 7234 Warning header per message, code 299 and
// agent "-", as kube-apiserver's warning recorder writes them.
func addWarnings(w http.ResponseWriter, msgs []string) {
	for _, m := range msgs {
		w.Header().Add("Warning", "299 - "+strconv.Quote(m))
	}
}
