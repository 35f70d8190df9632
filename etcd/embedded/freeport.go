package embedded

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// A member needs its ports before etcd listens on them, so they are chosen
// first and etcd binds them a moment later. A port the kernel handed out
// for port 0 would be free in that moment only by luck on a busy machine:
// the kernel hands the same range out for every other listener on port 0
// and for the source port of every outgoing connection, and the suite
// opens them by the thousand (a fan-out test alone, ten thousand). So
// FreeURL chooses below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), where only a process that
// names a port can take it, and checks that it is free.

// freePortFloor is the lowest port FreeURL chooses: above the registered
// ports most services listen on (etcd's 2379 and 2380, 6443, 8080).
const freePortFloor = 20000

// FreeURL returns an http URL on a loopback port that is free now and that
// the kernel does not hand out by itself (see above). Where the ephemeral
// range leaves no room below it, it falls back to a port the kernel
// chooses.
func FreeURL() (string, error) {
	if top := ephemeralLow(); top-freePortFloor >= 1000 {
		for range 100 {
			port := freePortFloor + rand.IntN(top-freePortFloor)
			if free(port) {
				return fmt.Sprintf("http://127.0.0.1:%d", port), nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", err
	}
	return "http://" + addr, nil
}

// free reports whether port can be listened on now, on loopback.
func free(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	return l.Close() == nil
}

// ephemeralLow is the lowest port of the kernel's ephemeral range, or
// Linux's default, 32768, where it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 32768
	}
	return low
}
