package workshop_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/client"
)

var (
	watchFrom = regexp.MustCompile(`^watch from rv=(\d+)$`)
	anyEvent  = regexp.MustCompile(`^(ADDED|MODIFIED|DELETED) +demo rv=(\d+)$`)
)

// TestRewatchSolution is exercises 2 and 3's check: with watches that the
// server ends every few hundred milliseconds and a killed connection,
// every change to demo is printed exactly once, in order.
func TestRewatchSolution(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	srv := startServer(t, apiserverConfig())
	srv.Faults().SetWatchTimeout(300 * time.Millisecond)
	p := start(t, "02-rewatch/solution", "-server", srv.URL(), "-namespace", "ex2")
	p.waitFor(ctx, watchFrom)

	c, err := client.New(client.Config{Host: srv.URL()})
	require.NoError(t, err)
	cms := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ex2")
	var written []string
	write := func(n int) {
		obj := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Name: "demo", Namespace: "ex2"}}
		require.NoError(t, obj.Set("data", fmt.Appendf(nil, `{"n":"%d"}`, n)))
		var got *api.Object
		if n == 0 {
			got, err = cms.Create(ctx, obj)
		} else {
			got, err = cms.Update(ctx, obj)
		}
		require.NoError(t, err)
		written = append(written, got.Metadata.ResourceVersion)
	}
	// Each change goes in a different watch: the test waits for the next
	// re-watch after each, so the changes straddle the server's timeouts
	// (some land between two watches and must be replayed).
	for n := range 4 {
		write(n)
		p.waitFor(ctx, watchFrom)
	}
	srv.Faults().KillWatchConnections() // the article's tcpkill
	write(4)
	require.NoError(t, cms.Delete(ctx, "demo", client.DeleteOptions{}))
	list, err := cms.List(ctx, api.ListOptions{})
	require.NoError(t, err)
	deleted := list.Metadata.ResourceVersion // the delete's revision: nothing else writes
	p.waitFor(ctx, regexp.MustCompile(`^DELETED +demo rv=`+deleted+`$`))
	p.stop()

	var printed []string
	for _, line := range p.seen {
		if m := anyEvent.FindStringSubmatch(line); m != nil {
			printed = append(printed, m[2])
		}
	}
	require.Equal(t, append(written, deleted), printed, "every change exactly once, in order; the program printed:\n%v", p.seen)
}

// TestRewatchSolutionRelistsAfter410 is exercise 3's check, the recipe of
// its Fix: the solution's watch is stalled, demo is deleted, the history
// compacted and the connection killed. The re-watch gets 410, and the
// list must say that demo went while the program was away.
func TestRewatchSolutionRelistsAfter410(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	srv := startServer(t, apiserverConfig())
	c, err := client.New(client.Config{Host: srv.URL()})
	require.NoError(t, err)
	cms := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ex3")
	p := start(t, "02-rewatch/solution", "-server", srv.URL(), "-namespace", "ex3")
	p.waitFor(ctx, watchFrom)
	obj := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Name: "demo", Namespace: "ex3"}}
	_, err = cms.Create(ctx, obj)
	require.NoError(t, err)
	p.waitFor(ctx, regexp.MustCompile(`^ADDED +demo rv=`))

	srv.Faults().StallWatches()
	require.NoError(t, cms.Delete(ctx, "demo", client.DeleteOptions{}))
	srv.Faults().CompactNow()
	srv.Faults().KillWatchConnections()
	p.waitFor(ctx, regexp.MustCompile(`^ERROR +410 too old resource version: \d+ \(\d+\): list again$`))
	p.waitFor(ctx, regexp.MustCompile(`^GONE +demo \(deleted while away\)$`))
	p.waitFor(ctx, regexp.MustCompile(`^listed 0 ConfigMaps in ex3 at rv=\d+$`))
	for _, line := range p.seen {
		assert.NotRegexp(t, `^DELETED +demo`, line, "the delete came from the list, not from the stalled watch")
	}
}
