package demo

import (
	"context"
	"net"
	"os"
	"sync/atomic"
	"syscall"

	"listwatch/api"
	"listwatch/client"
)

// Cable is the network between one client and the server, with a plug. It
// has the List and Watch of a *client.ResourceClient, so a RetryWatcher or
// a Reflector can use it in its place. While it is unplugged every new List
// and Watch fails at once with "connection refused", as while an apiserver
// restarts or a laptop sleeps; open watches are not touched (drop them with
// the server's Faults().KillWatchConnections, the article's tcpkill).
type Cable struct {
	rc        *client.ResourceClient
	unplugged atomic.Bool
}

// NewCable returns a plugged-in cable to rc.
func NewCable(rc *client.ResourceClient) *Cable { return &Cable{rc: rc} }

// Unplug makes every new request fail until Plug.
func (c *Cable) Unplug() { c.unplugged.Store(true) }

// Plug lets requests through again.
func (c *Cable) Plug() { c.unplugged.Store(false) }

// refused is the error a dial to a closed port returns, so that
// errors.Is(err, syscall.ECONNREFUSED) holds, as it does for the real thing.
func refused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// List lists through the cable.
func (c *Cable) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	if c.unplugged.Load() {
		return nil, refused()
	}
	return c.rc.List(ctx, opts)
}

// Watch watches through the cable.
func (c *Cable) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	if c.unplugged.Load() {
		return nil, refused()
	}
	return c.rc.Watch(ctx, opts)
}
