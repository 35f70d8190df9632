package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedFilesAreCurrent regenerates the schema files and requires
// the checked-in copies to be identical: nobody edits them by hand.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := generateAll()
	require.NoError(t, err)
	require.Len(t, files, len(groupVersions))
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(outDir, name))
		require.NoError(t, err, "run `go run .` in tools/openapigen")
		require.True(t, string(got) == string(want), "%s is stale: run `go run .` in tools/openapigen", name)
		require.True(t, json.Valid(got), "%s is not JSON", name)
	}
}

// TestEveryReferenceIsIncluded: a schema file is closed under $ref, so
// kubectl explain can follow every field down.
func TestEveryReferenceIsIncluded(t *testing.T) {
	files, err := generateAll()
	require.NoError(t, err)
	for name, b := range files {
		var doc struct {
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		require.NoError(t, json.Unmarshal(b, &doc))
		for from, s := range doc.Components.Schemas {
			for _, r := range refs(s) {
				require.Contains(t, doc.Components.Schemas, r, "%s: %s references it", name, from)
			}
		}
	}
}
