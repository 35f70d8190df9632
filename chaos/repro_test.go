package chaos

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/internal/leakcheck"
)

// Minimal reproductions of bugs the chaos run found in other packages,
// kept as regression tests now that the bugs are fixed.

// client's idle timer (client/idle.go): newWatchBody assigns b.timer after
// time.AfterFunc has started the timer, and the timer's function (Close)
// reads b.timer, with nothing ordering the two. The race detector reports
// it whenever an idle timeout fires, which the chaos run's stalls make
// happen (seed 117 of the CI run). With an idle timeout of 1 ns it fires at
// once.
func TestReproIdleTimerDataRace(t *testing.T) {
	defer leakcheck.Check(t)()
	// A safety bound only: it turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := apiserver.Start(ctx, apiserver.Config{})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Stop(context.Background())) }()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	c, err := client.New(client.Config{Host: srv.URL(), HTTPClient: &http.Client{Transport: transport}, IdleWatchTimeout: time.Nanosecond})
	require.NoError(t, err)
	for range 20 {
		w, err := c.Resource(configMaps).Watch(ctx, api.ListOptions{})
		require.NoError(t, err)
		for range w.ResultChan() {
		}
		w.Stop()
	}
}

// client.StreamWatcher documents that once Stop has returned no event is
// delivered, but its reading goroutine checks for Stop and then sends in
// a select that also waits for Stop: if Stop lands in between and a
// receiver is waiting, the select may pick the send. A consumer that
// stops a watch and keeps reading (as a RetryWatcher does while it
// replaces one) can then handle an event of a watch it has given up on.
// FuzzStreamWatcher finds it within seconds; here a stream whose second
// frame is garbage races the ERROR event against Stop.
func TestReproStreamWatcherDeliversAfterStop(t *testing.T) {
	defer leakcheck.Check(t)()
	event := `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"1"}}}`
	late := 0
	for range 20000 {
		pr, pw := io.Pipe()
		go func() { _, _ = pw.Write([]byte(event + "garbage")) }()
		w := client.NewStreamWatcher(pr, nil)
		<-w.ResultChan()
		w.Stop()
		if _, ok := <-w.ResultChan(); ok {
			late++
		}
		<-w.Done()
	}
	require.Zero(t, late, "%d events delivered after Stop returned, in 20000 watches", late)
}
