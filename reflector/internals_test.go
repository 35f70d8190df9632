package reflector

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"listwatch/api"
)

func TestTooLargeResourceVersionAcrossServerVersions(t *testing.T) {
	timeout := func(msg string, causes ...api.StatusCause) *api.Status {
		return &api.Status{Kind: "Status", Status: api.StatusFailure, Code: http.StatusGatewayTimeout,
			Reason: api.ReasonTimeout, Message: msg, Details: &api.StatusDetails{Causes: causes}}
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"current servers: cause type", api.NewTooLargeResourceVersion(10, 5, 1), true},
		{"1.17.0-1.18.5: cause message only", timeout("Timeout: x", api.StatusCause{Message: "Too large resource version"}), true},
		{"before 1.17: message only", timeout("Timeout: Too large resource version: 10, current: 5"), true},
		{"an ordinary timeout", api.NewTimeout("request did not complete", 1), false},
		{"not a Status", assert.AnError, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, isTooLargeResourceVersionError(tc.err))
		})
	}
}

func TestOptionDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	assert.Equal(t, "reflector", o.Name)
	assert.Equal(t, 5*time.Minute, o.MinWatchTimeout)
	assert.Equal(t, 10*time.Minute, o.MaxWatchTimeout)
	assert.Equal(t, DefaultBackoff, o.Backoff)

	o = Options{MinWatchTimeout: 10 * time.Second}.withDefaults()
	assert.Equal(t, 20*time.Second, o.MaxWatchTimeout, "max defaults to twice min, as client-go")
	o = Options{MinWatchTimeout: 10 * time.Second, MaxWatchTimeout: time.Second}.withDefaults()
	assert.Equal(t, 10*time.Second, o.MaxWatchTimeout, "max is never below min")

	b := Backoff{Initial: time.Second, Max: time.Millisecond, Factor: 0.5, Jitter: -1, ResetAfter: time.Hour}.withDefaults()
	assert.Equal(t, Backoff{Initial: time.Second, Max: time.Second, Factor: 2, Jitter: 0, ResetAfter: time.Hour}, b,
		"a cap below the initial delay is raised, a shrinking factor refused, negative jitter means none")
}

func TestGatherStoreKeepsArrivalOrderAndLatestState(t *testing.T) {
	g := newGatherStore()
	_ = g.Add(obj("b", "1"))
	_ = g.Add(obj("a", "2"))
	_ = g.Update(obj("b", "3"))
	_ = g.Delete(obj("a", "4"))
	_ = g.Add(obj("a", "5")) // re-created: listed once, at its first place
	assert.Error(t, g.Replace(nil, ""))
	assert.NoError(t, g.Resync())
	var got []string
	for _, o := range g.list() {
		got = append(got, o.Key()+"@"+o.Metadata.ResourceVersion)
	}
	assert.Equal(t, []string{"ns/b@3", "ns/a@5"}, got)
}
