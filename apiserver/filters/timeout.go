package filters

import (
	"net/http"
	"strings"
	"time"

	"listwatch/api"
)

// invalidTimeoutInURL starts the message of a request whose ?timeout= is
// no duration, word for word kube-apiserver's
// (k8s.io/apiserver/pkg/endpoints/filters/request_deadline.go).
const invalidTimeoutInURL = "invalid timeout specified in the request URL"

// CheckTimeout reads the ?timeout= parameter of a request that is not a
// watch, as kube-apiserver's WithRequestDeadline filter does
// (request_deadline.go, parseTimeout): a value time.ParseDuration rejects
// ("invalid", "10") is a 400 BadRequest naming the parse error, before the
// request reaches authentication or its handler. A watch is long-running
// and never checked there (its own timeoutSeconds bounds it).
//
// kube-apiserver also turns a valid value into the request's deadline,
// capped at --request-timeout (60 s by default; 0 or more than that means
// the cap), and WithTimeoutForNonLongRunningRequests answers 504 when it
// passes. Ours applies no deadline to a short request: it checks the value
// and serves the request as it would without one.
func CheckTimeout(r *http.Request, kind Kind) *api.Status {
	if kind == Watch || isLivePage(r.URL.Path) {
		return nil
	}
	value := r.URL.Query().Get("timeout")
	if value == "" {
		return nil
	}
	if _, err := time.ParseDuration(value); err != nil {
		return api.NewBadRequest(invalidTimeoutInURL + " - " + err.Error())
	}
	return nil
}

// isLivePage reports whether path is our live page's (/ui), which
// kube-apiserver does not have: there ?timeout= is the page's own setting,
// the watch timeout in seconds it asks for ("?timeout=2", no unit), not
// kube-apiserver's parameter.
func isLivePage(path string) bool {
	return path == "/ui" || strings.HasPrefix(path, "/ui/")
}
