package ui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	pathpkg "path"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/leakcheck"
)

func get(t *testing.T, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

func TestHandlerServesThePage(t *testing.T) {
	defer leakcheck.Check(t)()
	tests := []struct {
		path, contentType, contains string
	}{
		{"/ui/", "text/html; charset=utf-8", `<script type="module" src="js/main.js">`},
		{"/ui/style.css", "text/css; charset=utf-8", "1280x720"},
		{"/ui/js/reflector.js", "text/javascript; charset=utf-8", "reflector/reflector.go"},
		{"/ui/js/client.js", "text/javascript; charset=utf-8", "class StreamWatcher"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp := get(t, http.MethodGet, tt.path)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tt.contentType, resp.Header.Get("Content-Type"), "modules need a JavaScript type")
			assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'")
			assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Contains(t, string(body), tt.contains)
		})
	}
}

func TestHandlerRefusesTheRest(t *testing.T) {
	defer leakcheck.Check(t)()
	tests := []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/ui", http.StatusMovedPermanently},
		{http.MethodHead, "/ui/", http.StatusOK},
		{http.MethodPost, "/ui/", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/ui/js/main.js", http.StatusMethodNotAllowed},
		{http.MethodGet, "/ui/nope.js", http.StatusNotFound},
		{http.MethodGet, "/elsewhere", http.StatusNotFound},
		{http.MethodGet, "/ui/../go.mod", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp := get(t, tt.method, tt.path)
			assert.Equal(t, tt.code, resp.StatusCode)
			if tt.code == http.StatusMovedPermanently {
				assert.Equal(t, Path, resp.Header.Get("Location"))
			}
		})
	}
}

// The page must work offline and be complete: every file it refers to is
// embedded, and nothing is fetched from another host.
func TestPageIsSelfContained(t *testing.T) {
	refs := regexp.MustCompile(`(?m)(?:src|href)="([^"]+)"|^import .* from "([^"]+)";$|import\("([^"]+)"\)`)
	external := regexp.MustCompile(`(?:https?:)?//[a-zA-Z0-9.-]+\.[a-z]{2,}/`)
	seen := 0
	err := fs.WalkDir(static, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, path)
		if err != nil {
			return err
		}
		seen++
		for _, m := range refs.FindAllStringSubmatch(string(b), -1) {
			ref := m[1] + m[2] + m[3]
			if strings.HasPrefix(ref, "data:") {
				continue
			}
			target := pathpkg.Join(pathpkg.Dir(path), ref)
			_, err := fs.Stat(static, target)
			assert.NoError(t, err, "%s refers to %s, which is not embedded", path, ref)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue // a comment may cite a URL
			}
			assert.False(t, external.MatchString(line), "%s fetches from another host: %s", path, line)
		}
		return nil
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, seen, 8)
}

// The JavaScript Reflector reads next to the Go one: its functions carry
// the Go names, and its comments say where the Go code is.
func TestReflectorJSMirrorsTheGoReflector(t *testing.T) {
	b, err := fs.ReadFile(static, "js/reflector.js")
	require.NoError(t, err)
	js := string(b)
	for _, name := range []string{
		"class Reflector", "lastSyncResourceVersion()", "setLastSyncResourceVersion(", "relistResourceVersion()",
		"async run(", "async listAndWatch(", "async list(", "async watch(", "async handleWatch(",
		"watchTimeoutSeconds()", "class VeryShortWatchError", "class BackoffManager",
		"reflector/reflector.go", "reflector/list.go", "reflector/watch.go", "reflector/errors.go", "reflector/backoff.go",
		`allowWatchBookmarks: "true"`,
	} {
		assert.Contains(t, js, name)
	}
}
