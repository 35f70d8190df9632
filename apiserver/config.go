package apiserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"listwatch/apiserver/filters"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/serving"
	"listwatch/narrate"
	"listwatch/store"
)

// Defaults of Config, and the binary's listen address.
const (
	// DefaultListen is where Start listens when Config.Listen is empty: a
	// free port on loopback, so tests and examples never collide.
	DefaultListen = "127.0.0.1:0"
	// DefaultBinaryListen is cmd/apiserver's default --listen.
	DefaultBinaryListen = "127.0.0.1:8080"
	// DefaultMinRequestTimeout is kube-apiserver's --min-request-timeout:
	// a watch without timeoutSeconds lasts between one and two times this,
	// i.e. 30 to 60 minutes. It is the timeout behind the first article's
	// "my watch channel closed after half an hour".
	DefaultMinRequestTimeout = 1800 * time.Second
	// DefaultBookmarkInterval is how often the watch cache sends a periodic
	// BOOKMARK to watchers that asked for them (Kubernetes: about a minute).
	DefaultBookmarkInterval = time.Minute
	// MaxRequestBodyBytes is the largest request body accepted (Kubernetes'
	// default is 3 MiB); a larger one gets 413.
	MaxRequestBodyBytes = filters.MaxRequestBodyBytes
	// DefaultCompactionInterval is kube-apiserver's
	// --etcd-compaction-interval: every 5 minutes the store forgets the
	// history older than the previous run of the compactor.
	DefaultCompactionInterval = 5 * time.Minute
)

// Config configures a Server. The zero value is usable: it listens on a free
// loopback port with Kubernetes' default timeouts.
type Config struct {
	// Listen is the TCP address to listen on (default "127.0.0.1:0"). The
	// server listens on loopback unless told otherwise.
	Listen string
	// MinRequestTimeout: a watch without ?timeoutSeconds ends after
	// MinRequestTimeout × (1 + rand), like kube-apiserver's
	// --min-request-timeout (default 1800s). Set it to seconds in a workshop
	// to see a watch channel close without waiting half an hour.
	MinRequestTimeout time.Duration
	// BookmarkInterval is the period of BOOKMARK events to watchers that
	// asked for them (default 1m); Faults().SetBookmarkInterval changes it
	// at runtime.
	BookmarkInterval time.Duration
	// HistorySize is each watch cache's ring buffer, in events (0: the
	// watch cache's default).
	HistorySize int
	// HistoryBytes bounds each watch cache's ring in bytes (0: the watch
	// cache's default, 64 MiB).
	HistoryBytes int64
	// ProtobufCacheBytes bounds the protobuf encodings of listed objects
	// the server keeps, so that a protobuf LIST does not transcode them
	// again (0: negotiation.DefaultProtobufCacheBytes, 64 MiB; negative:
	// keep none).
	ProtobufCacheBytes int64
	// StoreHistoryBytes, CompactionInterval and StartRevision configure
	// the in-memory store Start makes when Store is nil; a store passed in
	// brings its own.
	//
	// StoreHistoryBytes bounds the store's history in bytes (0: the
	// store's default, 128 MiB).
	StoreHistoryBytes int64
	// CompactionInterval is how often the store compacts its history in
	// the background (0: DefaultCompactionInterval; negative: never).
	CompactionInterval time.Duration
	// StartRevision is the store's first revision (0: 1). cmd/apiserver
	// passes store.RevisionFromClock, so that after a restart every
	// resourceVersion of the previous run is too old (410) rather than
	// silently meaningless; see docs/limits.md.
	StartRevision int64
	// WatchWriters is how many watches may write at once; the others wait
	// their turn in line (cacher.Turns). 0: half the CPUs, at least one.
	WatchWriters int
	// WatcherBuffer is each watcher's bounded queue, in frames (0: the watch
	// cache's default).
	WatcherBuffer int
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the
	// requests served at once, read-only (GET, LIST) and mutating, like
	// kube-apiserver's --max-requests-inflight (400) and
	// --max-mutating-requests-inflight (200), the defaults for 0; a
	// request past its limit gets 429 with Retry-After. Negative: no limit.
	// Watches and health probes do not count (see MaxWatches).
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	// MaxWatches bounds open watches (429 beyond) and MaxConnections open
	// connections (503 beyond). 0 derives both from the process's
	// file-descriptor limit, keeping headroom for ordinary requests and
	// health probes (filters.DefaultConnectionLimits); negative: no limit.
	MaxWatches     int
	MaxConnections int
	// WriteTimeout bounds writing one ordinary response, and each write of
	// an HTTP/1.1 watch: a client that reads nothing for this long loses
	// its connection, so it cannot pin a goroutine (0: a minute,
	// filters.ResponseWriteTimeout). kube-apiserver has no such deadline on
	// a watch's writes; see apiserver/filters/limits.go for why we do.
	WriteTimeout time.Duration
	// EnableFaults exposes the workshop fault switches over HTTP under
	// /faults/. The Go API, Server.Faults, works either way.
	EnableFaults bool
	// Profiling serves Go's profiler under /debug/pprof/ (kube-apiserver's
	// --profiling, which is on by default there; off here, because without
	// a Token anyone who can connect could ask for a profile).
	Profiling bool
	// Token, if set, is the bearer token every request must carry
	// ("Authorization: Bearer <token>"); any other request gets 401.
	Token string
	// TLSCertFile and TLSKeyFile, both PEM (kube-apiserver's
	// --tls-cert-file and --tls-private-key-file), make the server serve
	// HTTPS, and HTTP/2 to clients that negotiate it by ALPN.
	TLSCertFile, TLSKeyFile string
	// SelfSignedTLS makes the server serve HTTPS with a certificate it
	// generates, valid for 127.0.0.1, ::1 and localhost, when no
	// TLSCertFile is given; Server.CACertificate and Server.Kubeconfig are
	// what clients need to trust it.
	SelfSignedTLS bool
	// Tracer narrates every request and watch; nil is silent. The same
	// tracer is handed to the store and the watch caches.
	Tracer *narrate.Tracer
	// Store is the store to serve from: nil (the default) makes a new
	// in-memory store.Store, which Stop closes; the nested module
	// listwatch/etcd passes its etcd store here. A store passed in is not
	// closed by Stop.
	Store store.Interface
	// Logger receives one line per request (method, path and query, status
	// code, duration, user agent); nil logs nothing.
	Logger *log.Logger
}

func (c Config) withDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MinRequestTimeout <= 0 {
		c.MinRequestTimeout = DefaultMinRequestTimeout
	}
	if c.BookmarkInterval <= 0 {
		c.BookmarkInterval = DefaultBookmarkInterval
	}
	if c.CompactionInterval == 0 {
		c.CompactionInterval = DefaultCompactionInterval
	}
	if c.ProtobufCacheBytes == 0 {
		c.ProtobufCacheBytes = negotiation.DefaultProtobufCacheBytes
	}
	if c.MaxRequestsInFlight == 0 {
		c.MaxRequestsInFlight = filters.DefaultMaxRequestsInFlight
	}
	if c.MaxMutatingRequestsInFlight == 0 {
		c.MaxMutatingRequestsInFlight = filters.DefaultMaxMutatingRequestsInFlight
	}
	if c.MaxWatches == 0 || c.MaxConnections == 0 {
		conns, watches := filters.DefaultConnectionLimits()
		if c.MaxWatches == 0 {
			c.MaxWatches = watches
		}
		if c.MaxConnections == 0 {
			c.MaxConnections = conns
		}
	}
	return c
}

// tls returns the TLS configuration the Config asks for (nil for plain
// HTTP) and the certificate clients should trust when it was generated.
func (c Config) tls() (*tls.Config, []byte, error) {
	switch {
	case c.TLSCertFile != "" || c.TLSKeyFile != "":
		if c.TLSCertFile == "" || c.TLSKeyFile == "" {
			return nil, nil, errors.New("apiserver: TLS needs both a certificate and a key file")
		}
		certPEM, err := os.ReadFile(c.TLSCertFile)
		if err != nil {
			return nil, nil, fmt.Errorf("apiserver: reading the TLS certificate: %w", err)
		}
		keyPEM, err := os.ReadFile(c.TLSKeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("apiserver: reading the TLS key: %w", err)
		}
		cfg, err := serving.TLSConfig(certPEM, keyPEM)
		return cfg, nil, err
	case c.SelfSignedTLS:
		certPEM, keyPEM, err := serving.GenerateSelfSigned(serving.SelfSignedHosts, time.Now())
		if err != nil {
			return nil, nil, err
		}
		cfg, err := serving.TLSConfig(certPEM, keyPEM)
		return cfg, certPEM, err
	}
	return nil, nil, nil
}
