//go:build linux

package chaos

import (
	"net"
	"net/http"
	"syscall"
	"time"
)

// Socket sizes of the informers' connections. On loopback the MSS is
// 64 KiB, so the kernel sizes a connection's send buffer for ten such
// segments: about 4 MiB that a server can write into a client that reads
// nothing before its write even blocks, and so before its watch cache
// notices the client is slow. Announcing an Ethernet-sized MSS and a small
// receive buffer when connecting makes both sides' buffers what they would
// be across a real network: about 100 KiB before the server feels it.
const (
	clientMSS     = 1460
	clientRcvBuf  = 4096
	dialKeepAlive = 30 * time.Second
)

// newTransport is an HTTP transport whose connections are sized like real
// network ones (see clientMSS).
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{
		KeepAlive: dialKeepAlive,
		Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				if serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, clientMSS); serr != nil {
					return
				}
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, clientRcvBuf)
			})
			if err != nil {
				return err
			}
			return serr
		},
	}
	t.DialContext = d.DialContext
	return t
}
