package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// groupVersion is one OpenAPI v3 document we cut schemas from.
type groupVersion struct {
	// fixture is the recorded document; out the file written.
	fixture, out string
	// roots are the schemas of the served kinds (and their lists).
	roots []string
}

// groupVersions lists what the apiserver serves (registry.Builtin): core
// v1 namespaces, configmaps, secrets, pods, services, events,
// serviceaccounts; apps/v1 deployments and replicasets and their scale
// subresource (autoscaling/v1 Scale); coordination.k8s.io/v1 leases;
// events.k8s.io/v1 events.
var groupVersions = []groupVersion{
	{fixture: "openapi-v3-api-v1.json.gz", out: "api-v1.json", roots: kinds("io.k8s.api.core.v1.",
		"Namespace", "ConfigMap", "Secret", "Pod", "Service", "Event", "ServiceAccount")},
	{fixture: "openapi-v3-apis-apps-v1.json", out: "apis-apps-v1.json", roots: append(kinds("io.k8s.api.apps.v1.",
		"Deployment", "ReplicaSet"), "io.k8s.api.autoscaling.v1.Scale")},
	{fixture: "openapi-v3-apis-coordination.k8s.io-v1.json", out: "apis-coordination.k8s.io-v1.json",
		roots: kinds("io.k8s.api.coordination.v1.", "Lease")},
	{fixture: "openapi-v3-apis-events.k8s.io-v1.json", out: "apis-events.k8s.io-v1.json",
		roots: kinds("io.k8s.api.events.v1.", "Event")},
}

// kinds names each kind's schema and its list's.
func kinds(prefix string, names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, prefix+n, prefix+n+"List")
	}
	return out
}

// generateAll returns every output file by name.
func generateAll() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, gv := range groupVersions {
		b, err := generate(gv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gv.fixture, err)
		}
		out[gv.out] = b
	}
	return out, nil
}

// generate reads one recorded document and writes {"components":{"schemas":
// ...}} with the roots and every schema they reach through $ref.
func generate(gv groupVersion) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(fixturesDir, gv.fixture))
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(gv.fixture, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	all := doc.Components.Schemas
	kept := map[string]json.RawMessage{}
	todo := append([]string(nil), gv.roots...)
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, done := kept[name]; done {
			continue
		}
		s, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("no schema %s", name)
		}
		kept[name] = s
		var v any
		if err := json.Unmarshal(s, &v); err != nil {
			return nil, err
		}
		todo = append(todo, refs(v)...)
	}
	names := make([]string, 0, len(kept))
	for n := range kept {
		names = append(names, n)
	}
	sort.Strings(names)
	// One schema per line: a readable diff when Kubernetes changes one.
	var buf bytes.Buffer
	buf.WriteString("{\"components\":{\"schemas\":{\n")
	for i, n := range names {
		key, _ := json.Marshal(n)
		var compact bytes.Buffer
		if err := json.Compact(&compact, kept[n]); err != nil {
			return nil, err
		}
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(compact.Bytes())
		if i < len(names)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("}}}\n")
	return buf.Bytes(), nil
}

// refs lists the schema names a schema references ("$ref":
// "#/components/schemas/<name>").
func refs(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				out = append(out, strings.TrimPrefix(s, "#/components/schemas/"))
				continue
			}
			out = append(out, refs(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, refs(e)...)
		}
	}
	return out
}
