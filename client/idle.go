package client

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/internal/clock"
	"listwatch/narrate"
)

// ErrWatchIdle is the (wrapped) read error of a watch that received no
// bytes for Config.IdleWatchTimeout. A StreamWatcher ends quietly on it, as
// on a dropped connection, so whoever watches again does.
var ErrWatchIdle = errors.New("watch idle: no bytes received, connection presumed dead")

// watchBody is the body of an open watch, whatever the transport. Close
// tears the connection down (cancelling the request, closing the socket),
// which is what makes a Read blocked on a silent connection return. With an
// idle timeout it also closes itself when no byte has arrived for that
// long: on a half-open TCP connection (the peer vanished without a FIN or
// RST, e.g. its NAT entry expired) nothing else would ever end the Read.
type watchBody struct {
	r       io.Reader
	closeFn func() error

	idle time.Duration
	// timerMu orders the timer's creation before its own callback's Close
	// reads it: a short idle timeout can fire before AfterFunc returns.
	timerMu sync.Mutex
	timer   clock.Timer
	idled   atomic.Bool

	closed   atomic.Bool
	once     sync.Once
	closeErr error
}

// newWatchBody wraps r; closeFn must make any blocked r.Read return.
// idle <= 0 means no idle timeout; clk times it.
func newWatchBody(r io.Reader, closeFn func() error, idle time.Duration, clk clock.Clock, tr *narrate.Tracer) *watchBody {
	b := &watchBody{r: r, closeFn: closeFn, idle: idle}
	if idle > 0 {
		b.timerMu.Lock()
		defer b.timerMu.Unlock()
		b.timer = clk.AfterFunc(idle, func() {
			if b.closed.Load() {
				return // a Read re-armed the timer as Close ran
			}
			b.idled.Store(true)
			tr.Printf(narrate.StreamWatcher, "no bytes for %v: presuming the connection half-open, closing it", idle)
			_ = b.Close()
		})
	}
	return b
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 && b.timer != nil && !b.closed.Load() {
		b.timer.Reset(b.idle)
	}
	if err != nil && b.idled.Load() {
		err = fmt.Errorf("%w (nothing for %v)", ErrWatchIdle, b.idle)
	}
	return n, err
}

// Close is idempotent and safe to call while a Read is blocked.
func (b *watchBody) Close() error {
	b.once.Do(func() {
		b.closed.Store(true)
		b.timerMu.Lock()
		t := b.timer
		b.timerMu.Unlock()
		if t != nil {
			t.Stop()
		}
		b.closeErr = b.closeFn()
	})
	return b.closeErr
}
