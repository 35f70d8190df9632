package filters

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A cap on open connections. Each HTTP/1.1 watch holds a connection, so
// 20,000 watches exhaust a process's file descriptors, and then the server
// cannot even accept the connection of a health probe ("accept4: too many
// open files", docs/limits.md). LimitListener keeps the count below the
// descriptor limit with room to spare, and answers a connection past the
// cap with a 503 and Retry-After instead of leaving it unaccepted in the
// kernel's queue, where a client would hang. kube-apiserver has no such
// cap; it relies on a descriptor limit of about a million and on
// priority-and-fairness.

// overflowResponse is written, raw, on a connection past the cap.
const overflowResponse = "HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Retry-After: 1\r\n" +
	"Connection: close\r\n" +
	"Content-Length: 54\r\n\r\n" +
	"Too many open connections, please try again later.\r\n\r\n"

// LimitListener returns a listener that keeps at most max connections
// open (max <= 0: no cap).
func LimitListener(ln net.Listener, max int) *ConnLimiter {
	return &ConnLimiter{Listener: ln, max: int64(max)}
}

// ConnLimiter is a listener with a cap on open connections.
type ConnLimiter struct {
	net.Listener
	max      int64
	open     atomic.Int64
	rejected atomic.Int64
}

// Accept returns the next connection under the cap; connections past it
// are answered 503 and closed.
func (l *ConnLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.max > 0 && l.open.Load() >= l.max {
			l.rejected.Add(1)
			go refuse(c)
			continue
		}
		l.open.Add(1)
		return &countedConn{Conn: c, l: l}, nil
	}
}

// Open is how many accepted connections are open; Rejected how many were
// refused.
func (l *ConnLimiter) Open() int64     { return l.open.Load() }
func (l *ConnLimiter) Rejected() int64 { return l.rejected.Load() }

// Max is the cap (0 or less: none).
func (l *ConnLimiter) Max() int64 { return l.max }

// refuse answers a connection past the cap without reading its request.
func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write([]byte(overflowResponse))
	_ = c.Close()
}

// countedConn gives its slot back on the first Close (net/http may close
// a connection more than once, and a hijacked one is closed by its owner).
type countedConn struct {
	net.Conn
	l    *ConnLimiter
	once sync.Once
}

// SetLinger passes on to the TCP connection, so a reset (the kill fault,
// serving.Reset) still reaches the client as a reset.
func (c *countedConn) SetLinger(sec int) error {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		return tc.SetLinger(sec)
	}
	return nil
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
