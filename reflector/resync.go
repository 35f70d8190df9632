package reflector

import (
	"context"
	"fmt"

	"listwatch/narrate"
)

// resyncLoop calls Store.Resync every ResyncPeriod (when ShouldResync
// agrees) until ctx is done. A resync does not talk to the server: it asks
// the Store to re-deliver what it already holds, so that handlers can
// periodically re-check the world. A Resync error is sent on errc and ends
// the current watch.
func (r *Reflector) resyncLoop(ctx context.Context, errc chan<- error) {
	if r.opts.ResyncPeriod <= 0 {
		return
	}
	t := r.clock.NewTimer(r.opts.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if r.opts.ShouldResync == nil || r.opts.ShouldResync() {
			r.tr.Printf(narrate.Reflector, "%sresync (every %v)", r.prefix, r.opts.ResyncPeriod)
			if err := r.store.Resync(); err != nil {
				select {
				case errc <- fmt.Errorf("%s: resync: %w", r.name, err):
				default:
				}
				return
			}
		}
		t.Reset(r.opts.ResyncPeriod)
	}
}
