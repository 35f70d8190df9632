//go:build !linux

package chaos

import "net/http"

// newTransport is a plain HTTP transport: the socket sizing done on Linux
// (see dial_linux.go) is not portable, so elsewhere a slow watcher takes a
// bigger burst before the server notices it.
func newTransport() *http.Transport {
	return http.DefaultTransport.(*http.Transport).Clone()
}
