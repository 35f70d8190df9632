package main

import (
	"bytes"
	"compress/gzip"
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

// save writes the body file and returns its README entry. A name ending
// in .pb is a binary body, written with a hex dump beside it (.txt); one
// ending in .json.gz is a body too big to keep as it is, written
// gzip-compressed (gunzip -c gives the exact bytes back).
func save(outDir, server string, s step, reqPath string, r *response) (string, error) {
	if err := writeBody(outDir, s.File, r.body); err != nil {
		return "", err
	}
	var b strings.Builder
	heading := "`" + s.File + "`"
	if dump, ok := strings.CutSuffix(s.File, ".pb"); ok {
		heading += " (+ `" + dump + ".txt`)"
	}
	fmt.Fprintf(&b, "### %s\n\n", heading)
	fmt.Fprintf(&b, "* Server: %s\n", server)
	fmt.Fprintf(&b, "* Request: `%s %s` - headers %s\n", s.Method, reqPath, requestHeaders(s))
	if s.Body != "" {
		fmt.Fprintf(&b, "* Request body: `%s`\n", s.Body)
	}
	fmt.Fprintf(&b, "* Response: `%s`, %s; %s\n", r.status, responseHeaders(r), bodyShape(s.File, r.body))
	fmt.Fprintf(&b, "* Recorded at %s", r.sent.UTC().Format(time.RFC3339))
	if s.Note != "" {
		fmt.Fprintf(&b, "; %s", s.Note)
	}
	if r.ended != "" {
		fmt.Fprintf(&b, "; ended: %s", r.ended)
	}
	b.WriteString("\n")
	switch {
	case len(r.frames) > 0:
		b.WriteString("* Frames:\n")
		for _, f := range r.frames {
			fmt.Fprintf(&b, "  - +%.3fs: %s\n", f.at.Seconds(), describeFrame(f))
		}
	case s.Stream:
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

func writeBody(outDir, name string, body []byte) error {
	data := body
	if strings.HasSuffix(name, ".json.gz") {
		var zb bytes.Buffer
		zw, err := gzip.NewWriterLevel(&zb, gzip.BestCompression) // no name, mtime 0
		if err != nil {
			return fmt.Errorf("gzip %s: %w", name, err)
		}
		if _, err := zw.Write(body); err != nil {
			return fmt.Errorf("gzip %s: %w", name, err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("gzip %s: %w", name, err)
		}
		data = zb.Bytes()
	}
	if err := os.WriteFile(filepath.Join(outDir, name), data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if dump, ok := strings.CutSuffix(name, ".pb"); ok {
		if err := os.WriteFile(filepath.Join(outDir, dump+".txt"), []byte(hexDump(body)), 0o644); err != nil {
			return fmt.Errorf("write %s.txt: %w", dump, err)
		}
	}
	return nil
}

// hexDump is hexdump -C's layout: offset, 16 bytes in hex in two groups
// of eight, the printable ones between bars, and the length last.
func hexDump(b []byte) string {
	var out strings.Builder
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		fmt.Fprintf(&out, "%08x  ", off)
		for i := range 16 {
			switch {
			case i < len(line):
				fmt.Fprintf(&out, "%02x ", line[i])
			default:
				out.WriteString("   ")
			}
			if i == 7 {
				out.WriteString(" ")
			}
		}
		out.WriteString(" |")
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			out.WriteByte(c)
		}
		out.WriteString("|\n")
	}
	fmt.Fprintf(&out, "%08x\n", len(b))
	return out.String()
}

// requestHeaders lists the headers a step sent, as requestBytes (and
// websocket) wrote them, without Host, the token and Content-Length.
func requestHeaders(s step) string {
	h := map[string]string{"User-Agent": "fixture-recorder", "Accept": "application/json"}
	if s.Body != "" {
		h["Content-Type"] = "application/json"
	}
	if s.Websocket {
		h["Accept"] = ""
		h["Upgrade"], h["Connection"], h["Origin"] = "websocket", "Upgrade", "http://localhost"
		h["Sec-WebSocket-Key"], h["Sec-WebSocket-Version"] = "<random 16 bytes, base64>", "13"
	}
	for k, v := range s.Headers {
		h[k] = v
	}
	var parts []string
	for _, k := range []string{"User-Agent", "Accept", "Content-Type"} {
		if h[k] != "" {
			parts = append(parts, "`"+k+": "+h[k]+"`")
		}
		delete(h, k)
	}
	for _, k := range sortedKeys(h) {
		if h[k] != "" {
			parts = append(parts, "`"+k+": "+h[k]+"`")
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
		if k == "Sec-Websocket-Accept" {
			parts = append(parts, "`Sec-WebSocket-Accept` (from the random key)")
			continue
		}
		parts = append(parts, "`"+k+": "+v+"`")
	}
	if len(parts) == 0 {
		return "no headers beyond the usual"
	}
	return strings.Join(parts, ", ")
}

func bodyShape(name string, body []byte) string {
	switch {
	case strings.HasSuffix(name, ".json.gz"):
		return fmt.Sprintf("body %d bytes (the FILE is that body gzip-compressed)", len(body))
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
	if !bytes.HasPrefix(data, []byte("{")) {
		return fmt.Sprintf("chunk of %d bytes (binary)", len(data))
	}
	var events []string
	for _, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Kind     string `json:"kind"`
				Code     int    `json:"code"`
				Reason   string `json:"reason"`
				Metadata struct {
					Name            string            `json:"name"`
					ResourceVersion string            `json:"resourceVersion"`
					Annotations     map[string]string `json:"annotations"`
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
		switch {
		case ev.Type == "BOOKMARK" && m.Annotations["k8s.io/initial-events-end"] == "true":
			events = append(events, "BOOKMARK initial-events-end rv="+m.ResourceVersion)
		case ev.Type == "BOOKMARK":
			events = append(events, "BOOKMARK rv="+m.ResourceVersion)
		case ev.Object.Kind == "Table":
			events = append(events, fmt.Sprintf("%s Table rv=%s", ev.Type, m.ResourceVersion))
		default:
			events = append(events, fmt.Sprintf("%s %s rv=%s", ev.Type, m.Name, m.ResourceVersion))
		}
	}
	return fmt.Sprintf("chunk of %d bytes = %s", len(data), strings.Join(events, "; "))
}
