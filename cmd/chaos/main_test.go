package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/leakcheck"
)

// A short run prints the seed first and the counts at the end, and exits 0.
func TestShortRun(t *testing.T) {
	defer leakcheck.Check(t)()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-seed", "5", "-duration", "1s", "-writers", "2", "-keys", "20", "-informers", "2", "-stall", "0", "-slow-watcher", "0"}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Equal(t, "seed 5", lines[0], "the seed comes first")
	assert.Contains(t, out.String(), "faults         watch-timeout=")
	assert.Contains(t, out.String(), "stall=0")
	assert.Contains(t, out.String(), "divergences    0")
	assert.Equal(t, "PASS: every informer and handler converged to the server's state", lines[len(lines)-1])
}

func TestBadArguments(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown flag":   {"-nope"},
		"stray argument": {"extra"},
		"bad rate":       {"-kill", "often"},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(context.Background(), args, &out, &errOut), name)
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, run(context.Background(), []string{"-keys", "1", "-writers", "2"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "every writer needs a key of its own")
}
