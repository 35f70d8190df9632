package ui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"listwatch/apiserver/ui"
)

// The page is one http.Handler for everything under ui.Path; the apiserver
// mounts it next to the API, so the page's requests (REST, the websocket
// watch, the debug view) go to the server that served it.
func ExampleHandler() {
	mux := http.NewServeMux()
	mux.Handle(ui.Path, ui.Handler())

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	// Output: 200 text/html; charset=utf-8
}
