package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// Path is where the page is served; Handler expects requests under it.
const Path = "/ui/"

//go:embed static
var files embed.FS

// static is the embedded tree with the "static/" prefix removed, so that
// /ui/index.html is static/index.html.
var static = mustSub(files, "static")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the directory is embedded at build time: it is there
	}
	return sub
}

// contentSecurityPolicy keeps the page to its own origin: scripts, styles
// and connections (REST, the websocket watch, the debug view) all go to the
// server that served it, and nothing is loaded from anywhere else.
const contentSecurityPolicy = "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; " +
	"style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page's files for requests under Path: GET and HEAD
// only, "/ui" redirected to "/ui/", a plain 404 for anything else. The
// files are the same for every request, so browsers may keep them while
// they revalidate (Last-Modified is the build's, i.e. absent, so they
// simply ask again: the page is small).
func Handler() http.Handler {
	fileServer := http.StripPrefix(strings.TrimSuffix(Path, "/"), http.FileServerFS(static))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == strings.TrimSuffix(Path, "/") {
			http.Redirect(w, r, Path, http.StatusMovedPermanently)
			return
		}
		if !strings.HasPrefix(r.URL.Path, Path) {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	})
}
