package filters

// Defaults for the connection and watch caps, derived from the process's
// limit on open file descriptors (Go raises the soft limit to the hard one
// at start-up on Unix). Every connection is a descriptor, and the server
// needs a few more of its own, so:
//
//	connections = descriptors - 256   (the server's own files, listeners)
//	watches     = connections - headroom, headroom = min(1024, connections/4)
//
// The headroom is what keeps ordinary requests and health probes
// answering while every watch slot is taken; a refused watch does not keep
// a share of it (refusedwatch.go). With 20,000 descriptors that
// is 19,744 connections and 18,720 watches; with a million, the
// connection cap is never the limit.

// reservedDescriptors are kept for what is not a client connection.
const reservedDescriptors = 256

// fallbackDescriptors is assumed where the limit cannot be read.
const fallbackDescriptors = 4096

// DefaultConnectionLimits returns the default cap on open connections and
// on open watches for this process.
func DefaultConnectionLimits() (maxConnections, maxWatches int) {
	fds := descriptorLimit()
	if fds <= 0 {
		fds = fallbackDescriptors
	}
	maxConnections = max(int(min(fds, 1<<30))-reservedDescriptors, 64)
	headroom := min(1024, maxConnections/4)
	return maxConnections, maxConnections - headroom
}
