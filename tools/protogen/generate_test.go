package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedFilesAreCurrent regenerates the descriptor set and the
// field table and requires the checked-in copies to be identical, so
// nobody edits them by hand and an upgrade of k8s.io/api in go.mod is
// one `go run .` away.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := generateAll()
	require.NoError(t, err)
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(outDir, name))
		require.NoError(t, err, "run `go run .` in tools/protogen")
		require.True(t, string(got) == string(want), "%s is stale: run `go run .` in tools/protogen", name)
	}
}

// TestGenerationIsDeterministic: two runs give the same bytes (map
// iteration and compiler concurrency do not leak into the output).
func TestGenerationIsDeterministic(t *testing.T) {
	a, err := generateAll()
	require.NoError(t, err)
	b, err := generateAll()
	require.NoError(t, err)
	require.Equal(t, a, b)
}
