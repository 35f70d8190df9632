package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// step is one request of the script. A step with a File is recorded; one
// without is only sent (to set up state, or to read a value).
type step struct {
	// File is the name of the body file written into the output
	// directory; Demonstrates says what the recording shows, Section
	// under which heading of the README its entry goes, and Note adds
	// a remark to its "Recorded at" line.
	File         string `json:"file,omitempty"`
	Demonstrates string `json:"demonstrates,omitempty"`
	Section      string `json:"section,omitempty"`
	Note         string `json:"note,omitempty"`

	Method  string            `json:"method,omitempty"`
	Path    string            `json:"path,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`

	// Set names variables to take from the JSON response body, each by a
	// dotted path (metadata.resourceVersion); later steps use ${name}.
	Set map[string]string `json:"set,omitempty"`
	// SetHeader names variables to take from response headers.
	SetHeader map[string]string `json:"setHeader,omitempty"`

	// HeadersOnly keeps the status line, the headers and the body's size
	// and digest, as text appended to File, not the body.
	HeadersOnly bool `json:"headersOnly,omitempty"`

	// Stream marks a watch: the body is read until the server ends it,
	// until it holds Events events when Events is set, or until
	// MaxSeconds pass (a hang guard), and During is sent while it is
	// open, each step PauseSeconds (0.8 unless set) after the one
	// before, as a person typing would.
	Stream     bool    `json:"stream,omitempty"`
	MaxSeconds float64 `json:"maxSeconds,omitempty"`
	// Events is how many events the stream holds when it is whole:
	// every line of the body, the initial ones (synthetic ADDEDs, a
	// bookmark) as well as those During's writes make. The recorder
	// stops reading once they have all arrived, however long the writes
	// take, instead of letting a server-side timeoutSeconds, counted
	// from the watch's start, race with them.
	Events       int     `json:"events,omitempty"`
	During       []step  `json:"during,omitempty"`
	PauseSeconds float64 `json:"pauseSeconds,omitempty"`

	// Websocket sends the request as a WebSocket upgrade (RFC 6455) and
	// records the messages; the recorder closes (status 1000) after
	// CloseAfterSeconds unless the server closes first.
	Websocket         bool    `json:"websocket,omitempty"`
	CloseAfterSeconds float64 `json:"closeAfterSeconds,omitempty"`

	// HTTP2 sends GET Path over HTTP/2 twice, without and with the
	// token, and records every frame as text.
	HTTP2 bool `json:"http2,omitempty"`

	// UntilStatus repeats the request (once a second) until the status
	// line starts with it: for what takes its time, like a new CRD.
	UntilStatus string `json:"untilStatus,omitempty"`
	// UntilCondition repeats the request (once a second) until the
	// object answered has this condition True in status.conditions: a
	// new CRD's Established, which both servers write asynchronously.
	UntilCondition string `json:"untilCondition,omitempty"`

	// CompactEtcd, instead of a request to kube-apiserver, compacts etcd
	// to its current revision (what kube-apiserver's own compactor does
	// every five minutes), so older resourceVersions are gone.
	CompactEtcd bool `json:"compactEtcd,omitempty"`

	// RestartAPIServer, instead of a request, restarts kube-apiserver on
	// the same etcd (refcluster restart-apiserver): its watch caches
	// start over, as after an upgrade or a crash.
	RestartAPIServer bool `json:"restartAPIServer,omitempty"`

	// Keep, instead of a request, carries File and its README entry over
	// from the previous recordings, for what this recorder cannot make;
	// Demonstrates says why.
	Keep bool `json:"keep,omitempty"`
}

// script is the file: the README's sections in order, and the steps.
type script struct {
	Sections []string `json:"sections"`
	Steps    []step   `json:"steps"`
}

func loadScript(path string) (script, error) {
	var sc script
	data, err := os.ReadFile(path)
	if err != nil {
		return sc, fmt.Errorf("script: %w", err)
	}
	// A script is the object, or just its steps (one section-less list).
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		err = json.Unmarshal(data, &sc.Steps)
	} else {
		err = json.Unmarshal(data, &sc)
	}
	if err != nil {
		return sc, fmt.Errorf("script %s: %w", path, err)
	}
	return sc, nil
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// expand replaces every ${name} by its value; an unknown name is an error,
// never an empty string sent to the server.
func expand(s string, vars map[string]string) (string, error) {
	var missing []string
	out := varRE.ReplaceAllStringFunc(s, func(m string) string {
		name := varRE.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("undefined variables %s in %q", strings.Join(missing, ", "), s)
	}
	return out, nil
}

// expandAll expands every value of a header map into a new map.
func expandAll(h map[string]string, vars map[string]string) (map[string]string, error) {
	if h == nil {
		return nil, nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		x, err := expand(v, vars)
		if err != nil {
			return nil, err
		}
		out[k] = x
	}
	return out, nil
}

// lookup follows a dotted path through a decoded JSON object.
func lookup(body []byte, path string) (string, error) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("response is not JSON: %w", err)
	}
	for _, key := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%s: %q is not inside an object", path, key)
		}
		if v, ok = obj[key]; !ok {
			return "", fmt.Errorf("%s: no %q", path, key)
		}
	}
	switch x := v.(type) {
	case string:
		return x, nil
	default:
		b, err := json.Marshal(x)
		return string(b), err
	}
}
