package apiserver

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Authentication, the smallest that is still real: with Config.Token set,
// every request must carry "Authorization: Bearer <token>" (what kubectl
// sends for --token or a kubeconfig token); anything else is 401
// Unauthorized, as kube-apiserver answers an unauthenticated request. The
// comparison takes the same time whatever the guess, so the token cannot
// be found byte by byte. Without a token the server trusts everyone, which
// is why it listens on loopback by default.

// authorized reports whether the request may proceed.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.cfg.Token)) == 1
}
