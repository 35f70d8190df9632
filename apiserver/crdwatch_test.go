package apiserver

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"listwatch/apiserver/crd"
	"listwatch/narrate"
)

// A started server already follows its CustomResourceDefinitions: its
// store watch of them is open when Start returns, as kube-apiserver is
// not ready before its definitions' informer has synced
// ("crd-informer-synced"). A client that counts the store's watches
// right after start (examples/09-fanout) finds them all. Two watch the
// definitions' prefix: their watch cache's and the controller's.
func TestStartedServerWatchesDefinitions(t *testing.T) {
	var opened atomic.Int64
	tr := narrate.New(io.Discard, narrate.WithFilter(func(layer, line string) bool {
		if layer == narrate.Store && strings.HasPrefix(line, "watch "+crd.Prefix+" from rev ") {
			opened.Add(1)
		}
		return false
	}))
	startServer(t, Config{Tracer: tr})
	assert.Equal(t, int64(2), opened.Load())
}
