package reflector

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"listwatch/api"
)

// errStopRequested ends a watch because the Reflector's context is done.
var errStopRequested = errors.New("reflector: stop requested")

// ErrNoWatcher is returned when a ListerWatcher's Watch returns neither a
// watcher nor an error.
var ErrNoWatcher = errors.New("reflector: Watch returned no watcher and no error")

// ErrInitialEventsIncomplete describes a watch-list stream that ended
// cleanly before its initial-events-end bookmark; the Reflector then
// streams again (as client-go does) and narrates this.
var ErrInitialEventsIncomplete = errors.New("reflector: watch-list stream ended before the initial-events-end bookmark")

// VeryShortWatchError reports a watch that the server closed within a
// second without sending a single event. Re-opening it at once would spin,
// so the Reflector treats it as trouble: back off, then re-list.
type VeryShortWatchError struct {
	// Name is the Reflector's name.
	Name string
}

func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("%s: very short watch: the watch closed within a second without any event", e.Name)
}

// isExpiredError is the 410 answer: the resourceVersion asked for has been
// compacted away. Servers before Kubernetes 1.18 used reason Gone, newer
// ones reason Expired; both mean "re-list".
func isExpiredError(err error) bool {
	return api.IsResourceExpired(err) || api.IsGone(err)
}

// isTooLargeResourceVersionError is the 504 a list or watch gets when it
// asks for a revision the server's cache has not reached yet (after talking
// to a newer apiserver, say). Like 410, it means "ask for the latest".
func isTooLargeResourceVersionError(err error) bool {
	if api.IsTooLargeResourceVersion(err) {
		return true
	}
	// Servers 1.17.0-1.18.5 sent the message without the cause type.
	s, ok := api.StatusOf(err)
	if !ok || !api.IsTimeout(err) {
		return false
	}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Message == "Too large resource version" {
				return true
			}
		}
	}
	return strings.Contains(s.Message, "Too large resource version")
}

// isWatchErrorRetriable says whether a failed watch should simply be
// re-opened (after a backoff) from where it was, instead of re-listing:
// "connection refused" means the apiserver is restarting and 429 means it
// is overloaded. Either way the resourceVersion we hold is still good, and
// re-listing everything would only add load.
func isWatchErrorRetriable(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || api.IsTooManyRequests(err)
}

// errNoList is returned when a ListerWatcher's List returns neither a list
// nor an error.
var errNoList = errors.New("reflector: the ListerWatcher's List returned no list and no error")
