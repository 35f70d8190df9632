package serving

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sort"
	"sync"
	"sync/atomic"
)

// Every connection the server accepts is a Conn: it has an id the debug
// view shows next to each watch it carries, it can be reset as a tcpkill
// would, and it can be frozen as a peer that vanished would leave it. Over
// HTTP/2 one connection carries many watches (streams), so these are
// connection-wide faults: a reset ends every stream, a freeze stops every
// stream and every PING answer.

// errFrozenClosed is what a write blocked on a frozen connection returns
// once the connection is closed.
var errFrozenClosed = errors.New("serving: connection closed while frozen")

// Conn is one accepted TCP connection.
type Conn struct {
	net.Conn
	id    int64
	conns *Conns

	closeOnce sync.Once
	closed    chan struct{}
	// frozen is set by Freeze: from then on every Write blocks until the
	// connection is closed.
	frozen atomic.Bool
	// http2 is set once a request arrives over HTTP/2 on this connection.
	http2 atomic.Bool
}

// ID is the connection's number, in order of acceptance from 1.
func (c *Conn) ID() int64 { return c.id }

// Write writes, unless the connection is frozen: then it blocks until the
// connection is closed, as writes to a peer that vanished stop draining.
func (c *Conn) Write(b []byte) (int, error) {
	if c.frozen.Load() {
		<-c.closed
		return 0, errFrozenClosed
	}
	return c.Conn.Write(b)
}

// Close closes the connection and forgets it.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		close(c.closed)
		c.conns.forget(c)
	})
	return err
}

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes one after an error response (so the client reads the response).
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Reset closes the connection with a TCP RST instead of an orderly close,
// as tcpkill does: the peer sees the connection break, not end.
func (c *Conn) Reset() {
	if tc, ok := c.Conn.(lingerer); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// Freeze makes the connection half-open from the client's side: nothing
// more is written on it (no data, no HTTP/2 PING answer) until it is
// closed. Reads go on, so the server still notices the client leaving.
func (c *Conn) Freeze() { c.frozen.Store(true) }

// Frozen reports whether Freeze was called.
func (c *Conn) Frozen() bool { return c.frozen.Load() }

// MarkHTTP2 records that the connection speaks HTTP/2.
func (c *Conn) MarkHTTP2() { c.http2.Store(true) }

// HTTP2 reports whether a request arrived over HTTP/2 on the connection.
func (c *Conn) HTTP2() bool { return c.http2.Load() }

// Conns are the open connections of one server. The zero value is not
// usable; call NewConns.
type Conns struct {
	mu     sync.Mutex
	nextID int64
	open   map[int64]*Conn
}

// NewConns returns an empty set of connections.
func NewConns() *Conns { return &Conns{open: map[int64]*Conn{}} }

// Listen wraps ln so every connection it accepts is a Conn of cs.
func (cs *Conns) Listen(ln net.Listener) net.Listener { return &listener{Listener: ln, conns: cs} }

func (cs *Conns) add(nc net.Conn) *Conn {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.nextID++
	c := &Conn{Conn: nc, id: cs.nextID, conns: cs, closed: make(chan struct{})}
	cs.open[c.id] = c
	return c
}

func (cs *Conns) forget(c *Conn) {
	cs.mu.Lock()
	delete(cs.open, c.id)
	cs.mu.Unlock()
}

// Count is the number of open connections.
func (cs *Conns) Count() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.open)
}

// List returns the open connections, in order of acceptance.
func (cs *Conns) List() []*Conn {
	cs.mu.Lock()
	out := make([]*Conn, 0, len(cs.open))
	for _, c := range cs.open {
		out = append(out, c)
	}
	cs.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// ResetFrozen resets every frozen connection: nothing else would ever end
// them (the server's graceful stop waits for them in vain).
func (cs *Conns) ResetFrozen() {
	for _, c := range cs.List() {
		if c.Frozen() {
			c.Reset()
		}
	}
}

// listener accepts Conns.
type listener struct {
	net.Listener
	conns *Conns
}

func (l *listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.conns.add(nc), nil
}

// connKey is the context key of the Conn a request arrived on.
type connKey struct{}

// ConnContext is an http.Server's ConnContext: it puts the connection
// (under its TLS layer, if any) in the context of every request it
// carries, HTTP/2 streams included.
func ConnContext(ctx context.Context, nc net.Conn) context.Context {
	if c := ConnOf(nc); c != nil {
		return context.WithValue(ctx, connKey{}, c)
	}
	return ctx
}

// FromContext returns the Conn a request arrived on, or nil.
func FromContext(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// ConnOf finds the Conn under nc (through a TLS layer), or nil.
func ConnOf(nc net.Conn) *Conn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, _ := nc.(*Conn)
	return c
}

// Reset closes nc with a TCP RST, whatever is wrapped around it.
func Reset(nc net.Conn) {
	if c := ConnOf(nc); c != nil {
		c.Reset()
		return
	}
	if tc, ok := nc.(lingerer); ok {
		_ = tc.SetLinger(0)
	}
	_ = nc.Close()
}

// lingerer is a connection that can be made to close with a reset: a
// *net.TCPConn, or a wrapper that passes it on (the connection cap's
// counted connections, apiserver/filters).
type lingerer interface{ SetLinger(sec int) error }
