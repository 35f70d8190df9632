package filters

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Authentication, the smallest that is still real: with a token configured
// (apiserver.Config.Token), every request must carry "Authorization: Bearer <token>" (what kubectl
// sends for --token or a kubeconfig token); anything else is 401
// Unauthorized, as kube-apiserver answers an unauthenticated request. The
// comparison takes the same time whatever the guess, so the token cannot
// be found byte by byte. Without a token the server trusts everyone, which
// is why it listens on loopback by default.

// Authorized reports whether the request may proceed when the server
// requires token ("" lets everyone in).
func Authorized(r *http.Request, token string) bool {
	if token == "" {
		return true
	}
	scheme, sent, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(sent)), []byte(token)) == 1
}
