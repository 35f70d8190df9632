// Package ui serves the browser page at /ui/: an informer written in
// JavaScript that lists, then watches over a websocket, next to a live
// picture of the server's watch caches and their watchers, with buttons to
// change objects and to pull the workshop fault switches.
//
// It sits at the very end of the data flow, in the browser: the page is a
// client like any other (it speaks only the Kubernetes REST API, the
// websocket watch and the debug view), so this package imports nothing of
// the server and the server imports it only to serve its files. The files
// are plain HTML, CSS and JavaScript modules embedded in the binary: no
// build step, no CDN, nothing fetched from elsewhere, so the page works
// offline, in a workshop room without network.
//
// The JavaScript is written to be read beside the Go client: static/js/
// reflector.js mirrors reflector/reflector.go, list.go and watch.go name by
// name, static/js/client.js the websocket StreamWatcher of client/, and
// static/js/store.js the Store the Reflector writes into. In Kubernetes the
// nearest thing is a browser dashboard built on the same watch; the
// machinery itself is client-go's tools/cache/reflector.go.
package ui
