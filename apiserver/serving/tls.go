package serving

//lint:file-ignore SA1019 golang.org/x/net/http2's Server is deprecated in favour of net/http's, whose HTTP2Config caps a connection's receive window below 4 MiB; kube-apiserver's is 25 MiB (100 streams x 256 KiB), which only x/net can announce.

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/net/http2"
)

// HTTP/2 settings, kube-apiserver's defaults (k8s.io/apiserver's
// SecureServingInfo, recorded in testdata/fixtures/http2-version-frames.txt):
// 100 concurrent streams per connection, so client-go opens a second
// connection past 100 watches; 256 KiB frames and per-stream receive
// window (its 99th percentile resource body); a connection window of 100
// such streams.
const (
	MaxConcurrentStreams = 100
	maxFrameSize         = 256 << 10
	streamReceiveWindow  = 256 << 10
	http2IdleTimeout     = 90 * time.Second
)

// TLSConfig returns the server's TLS configuration for a certificate and
// key (PEM): TLS 1.2 or later, and ALPN offering h2 before http/1.1, so
// clients that speak HTTP/2 get it, as from kube-apiserver.
func TLSConfig(certPEM, keyPEM []byte) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("serving: loading the certificate: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{http2.NextProtoTLS, "http/1.1"},
	}, nil
}

// ConfigureHTTP2 makes srv speak HTTP/2 to clients that negotiate it by
// ALPN, with kube-apiserver's SETTINGS.
func ConfigureHTTP2(srv *http.Server) error {
	return http2.ConfigureServer(srv, &http2.Server{
		MaxConcurrentStreams:         MaxConcurrentStreams,
		MaxReadFrameSize:             maxFrameSize,
		MaxUploadBufferPerStream:     streamReceiveWindow,
		MaxUploadBufferPerConnection: streamReceiveWindow * MaxConcurrentStreams,
		IdleTimeout:                  http2IdleTimeout,
	})
}
