package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// everyResponse says whether every response carries the header with a new
// value each time; an entry leaves those out, as
// testdata/fixtures/README.md does.
func everyResponse(header string) bool {
	switch header {
	case "Audit-Id", "Date", "X-Kubernetes-Pf-Flowschema-Uid", "X-Kubernetes-Pf-Prioritylevel-Uid":
		return true
	}
	return false
}

// save writes the body file and returns its README entry.
func save(outDir, server string, s step, reqPath string, r *response) (string, error) {
	if err := os.WriteFile(filepath.Join(outDir, s.File), r.body, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", s.File, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### `%s`\n\n", s.File)
	fmt.Fprintf(&b, "* Server: %s\n", server)
	fmt.Fprintf(&b, "* Request: `%s %s` - headers %s\n", s.Method, reqPath, requestHeaders(s))
	if s.Body != "" {
		fmt.Fprintf(&b, "* Request body: `%s`\n", s.Body)
	}
	fmt.Fprintf(&b, "* Response: `%s`, %s; %s\n", r.status, responseHeaders(r), bodyShape(r.body))
	fmt.Fprintf(&b, "* Recorded at %s", r.sent.UTC().Format(time.RFC3339))
	if r.ended != "" {
		fmt.Fprintf(&b, "; ended: %s", r.ended)
	}
	b.WriteString("\n")
	if s.Stream {
		b.WriteString("* Stream:\n")
		for _, c := range r.chunks {
			fmt.Fprintf(&b, "  - +%.3fs: %s\n", c.at.Seconds(), describeChunk(c.data))
		}
	}
	if s.Demonstrates != "" {
		fmt.Fprintf(&b, "* Demonstrates: %s\n", s.Demonstrates)
	}
	return b.String() + "\n", nil
}

func requestHeaders(s step) string {
	parts := []string{"`User-Agent: fixture-recorder`"}
	accept := "application/json"
	if a, ok := s.Headers["Accept"]; ok {
		accept = a
	}
	parts = append(parts, "`Accept: "+accept+"`")
	if s.Body != "" {
		parts = append(parts, "`Content-Type: application/json`")
	}
	for _, k := range sortedKeys(s.Headers) {
		if k != "Accept" {
			parts = append(parts, "`"+k+": "+s.Headers[k]+"`")
		}
	}
	return strings.Join(parts, ", ")
}

func responseHeaders(r *response) string {
	var parts []string
	for _, k := range r.headerKeys {
		v := strings.Join(r.header[k], ", ")
		if everyResponse(k) || (k == "Cache-Control" && v == "no-cache, private") {
			continue
		}
		parts = append(parts, "`"+k+": "+v+"`")
	}
	if len(parts) == 0 {
		return "no headers beyond the usual"
	}
	return strings.Join(parts, ", ")
}

func bodyShape(body []byte) string {
	switch {
	case len(body) == 0:
		return "body 0 bytes"
	case bytes.HasSuffix(body, []byte("\n")):
		return fmt.Sprintf("body %d bytes, ends with `\\n`", len(body))
	}
	return fmt.Sprintf("body %d bytes, does NOT end with `\\n`", len(body))
}

// describeChunk names the watch events in one chunk: type, object name
// and resourceVersion, or an ERROR's code and reason.
func describeChunk(data []byte) string {
	if len(data) == 0 {
		return "terminal 0-size chunk (server ended the response)"
	}
	var events []string
	for _, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Code     int    `json:"code"`
				Reason   string `json:"reason"`
				Metadata struct {
					Name            string `json:"name"`
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
			// kube-apiserver writes through a buffer: one chunk can end
			// inside an event that the next chunk finishes.
			events = append(events, fmt.Sprintf("(%d bytes of an event cut by the chunk boundary)", len(line)))
			continue
		}
		if ev.Type == "ERROR" {
			events = append(events, fmt.Sprintf("ERROR Status %d %s", ev.Object.Code, ev.Object.Reason))
			continue
		}
		m := ev.Object.Metadata
		events = append(events, fmt.Sprintf("%s %s rv=%s", ev.Type, m.Name, m.ResourceVersion))
	}
	return fmt.Sprintf("chunk of %d bytes = %s", len(data), strings.Join(events, "; "))
}
