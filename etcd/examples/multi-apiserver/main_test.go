package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example passes: one write seen by the watchers of all three
// apiservers with one resourceVersion, and an informer that survives its
// apiserver's stop without listing again (run returns an error otherwise).
func TestThreeApiserversOnOneCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // only a hang gets near it
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, t.TempDir(), false), out.String())
	t.Log(out.String())
	assert.Contains(t, out.String(), "LIST requests on apiserver-1 and apiserver-2: 0")
	for _, line := range []string{"watch on apiserver-0: ADDED", "watch on apiserver-1: ADDED", "watch on apiserver-2: ADDED"} {
		assert.Contains(t, out.String(), line)
	}
}
