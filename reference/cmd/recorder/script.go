package main

import (
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
	// directory; Demonstrates says what the recording shows.
	File         string `json:"file,omitempty"`
	Demonstrates string `json:"demonstrates,omitempty"`

	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`

	// Set names variables to take from the JSON response body, each by a
	// dotted path (metadata.resourceVersion); later steps use ${name}.
	Set map[string]string `json:"set,omitempty"`

	// Stream marks a watch: the body is read until the server ends it or
	// MaxSeconds pass, and During is sent while it is open.
	Stream     bool    `json:"stream,omitempty"`
	MaxSeconds float64 `json:"maxSeconds,omitempty"`
	During     []step  `json:"during,omitempty"`

	// CompactEtcd, instead of a request to kube-apiserver, compacts etcd
	// to its current revision (what kube-apiserver's own compactor does
	// every five minutes), so older resourceVersions are gone.
	CompactEtcd bool `json:"compactEtcd,omitempty"`
}

func loadScript(path string) ([]step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	var steps []step
	if err := json.Unmarshal(data, &steps); err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return steps, nil
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
