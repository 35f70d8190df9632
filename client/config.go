package client

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"listwatch/internal/clock"
	"listwatch/narrate"
)

// Version is this client's version, sent in the default User-Agent.
const Version = "v0.1.0"

// DefaultUserAgent is sent when Config.UserAgent is empty. The server takes
// the part before the first "/" as the field manager of what we write, so
// objects we create show manager "listwatch".
const DefaultUserAgent = "listwatch/" + Version

// TransportKind chooses how a watch travels. Every other request is plain
// HTTP either way.
type TransportKind int

const (
	// TransportHTTP streams a watch as one long chunked HTTP response (the
	// default, and what client-go does).
	TransportHTTP TransportKind = iota
	// TransportWebSocket upgrades the watch request to a websocket; each
	// event then arrives as one text message. Browsers and some proxies
	// can only watch this way.
	TransportWebSocket
)

// String names the transport for logs.
func (k TransportKind) String() string {
	switch k {
	case TransportHTTP:
		return "http"
	case TransportWebSocket:
		return "websocket"
	}
	return fmt.Sprintf("TransportKind(%d)", int(k))
}

// Config says where the API server is and how to talk to it, the part of
// client-go's rest.Config that list-watch needs.
type Config struct {
	// Host is the server's base URL: "http://127.0.0.1:8001" (kubectl
	// proxy, or our apiserver) or "https://10.0.0.1:6443". Without a
	// scheme it is http, or https when CAFile or Insecure is set. A path
	// (a proxy's prefix) is kept in front of every request path.
	Host string
	// FailoverHosts are more servers of the same cluster (same scheme and
	// path prefix as Host, other addresses). When the current server cannot
	// be reached, a request goes to the next one, and the client stays
	// there. Watches over TransportWebSocket always go to Host. client-go
	// has no such thing: real clusters put a load balancer in front of
	// their apiservers.
	FailoverHosts []string
	// BearerToken, if set, is sent as "Authorization: Bearer <token>".
	BearerToken string
	// CAFile is a PEM file of certificate authorities to trust for https.
	CAFile string
	// CAData is the same as PEM bytes (a kubeconfig's
	// certificate-authority-data); both may be set.
	CAData []byte
	// Insecure skips verifying the server's certificate. For local tests
	// only.
	Insecure bool
	// CertFile and KeyFile are a PEM client certificate and its key, sent
	// when the server asks for one (a kubeconfig's client-certificate and
	// client-key); CertData and KeyData are the same as PEM bytes. A
	// server that authenticates by client certificate takes the user from
	// it.
	CertFile, KeyFile string
	CertData, KeyData []byte
	// UserAgent defaults to DefaultUserAgent.
	UserAgent string
	// Transport chooses how watches travel; the zero value is chunked HTTP.
	Transport TransportKind
	// HTTPClient, if set, sends the HTTP requests as it is (its transport,
	// TLS settings and timeouts; a Timeout would also cut long watches).
	// Websocket watches dial their own connections with the TLS settings
	// above.
	HTTPClient *http.Client
	// Tracer narrates requests and watches; nil is silent.
	Tracer *narrate.Tracer
	// IdleWatchTimeout, if positive, ends a watch that has received no
	// bytes at all for this long, as if the connection had dropped. It is
	// how a client notices a half-open connection (the server or a NAT in
	// between forgot it, and no RST ever arrives), which otherwise looks
	// exactly like a quiet watch and hangs forever. Pick it well above
	// the server's bookmark period (about a minute on Kubernetes) so a
	// quiet but healthy watch is not cut. Zero turns it off.
	IdleWatchTimeout time.Duration
	// HTTP2ReadIdleTimeout and HTTP2PingTimeout are the health check of an
	// HTTP/2 connection, which an https server negotiates by ALPN and
	// which then carries every request and watch of this client: when no
	// frame at all has arrived for ReadIdleTimeout the client sends a
	// PING, and when no answer comes within PingTimeout it closes the
	// connection, ending every watch on it like a dropped connection (they
	// re-watch from their last resourceVersion). Zero means client-go's
	// defaults since Kubernetes 1.20 (kubernetes PR 95981): 30 s and 15 s;
	// a negative ReadIdleTimeout turns the check off.
	HTTP2ReadIdleTimeout time.Duration
	HTTP2PingTimeout     time.Duration
	// DisableHTTP2 keeps https on HTTP/1.1, one connection per watch.
	DisableHTTP2 bool
}

// client-go's HTTP/2 health check defaults (k8s.io/apimachinery's
// util/net, since kubernetes PR 95981).
const (
	DefaultHTTP2ReadIdleTimeout = 30 * time.Second
	DefaultHTTP2PingTimeout     = 15 * time.Second
)

// Client sends requests to one API server. It is safe for concurrent use;
// make one and share it.
type Client struct {
	base       *url.URL
	httpClient *http.Client
	tlsConfig  *tls.Config
	userAgent  string
	token      string
	transport  TransportKind
	idle       time.Duration
	// clock times IdleWatchTimeout: the real one, or a fake in tests.
	clock clock.Clock
	tr    *narrate.Tracer
}

// New checks cfg and returns a Client. Nothing is sent until a request is
// made.
func New(cfg Config) (*Client, error) {
	host := strings.TrimSpace(cfg.Host)
	if host == "" {
		return nil, fmt.Errorf("client: Config.Host is empty")
	}
	base, err := parseHost(host, cfg.CAFile != "" || cfg.Insecure)
	if err != nil {
		return nil, fmt.Errorf("client: Config.Host: %w", err)
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawQuery, base.Fragment = "", ""

	if cfg.Transport != TransportHTTP && cfg.Transport != TransportWebSocket {
		return nil, fmt.Errorf("client: unknown Config.Transport %v", cfg.Transport)
	}
	if cfg.IdleWatchTimeout < 0 {
		return nil, fmt.Errorf("client: Config.IdleWatchTimeout %v is negative", cfg.IdleWatchTimeout)
	}

	tlsConfig, err := newTLSConfig(cfg)
	if err != nil {
		return nil, err
	}
	httpClient, err := newHTTPClient(cfg, tlsConfig, base)
	if err != nil {
		return nil, err
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	return &Client{
		base:       base,
		httpClient: httpClient,
		tlsConfig:  tlsConfig,
		userAgent:  ua,
		token:      cfg.BearerToken,
		transport:  cfg.Transport,
		idle:       cfg.IdleWatchTimeout,
		clock:      clock.Real{},
		tr:         cfg.Tracer,
	}, nil
}

// newTLSConfig is the TLS configuration Config asks for: the server's
// certificate checked against CAFile and CAData, or not at all with
// Insecure, and the client certificate, if any.
func newTLSConfig(cfg Config) (*tls.Config, error) {
	tlsConfig := &tls.Config{InsecureSkipVerify: cfg.Insecure} //nolint:gosec // opt-in, for local tests
	if err := loadClientCert(tlsConfig, cfg); err != nil {
		return nil, err
	}
	if cfg.CAFile == "" && len(cfg.CAData) == 0 {
		return tlsConfig, nil
	}
	pool := x509.NewCertPool()
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("client: reading CAFile: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client: CAFile %s holds no PEM certificate", cfg.CAFile)
		}
	}
	if len(cfg.CAData) > 0 && !pool.AppendCertsFromPEM(cfg.CAData) {
		return nil, fmt.Errorf("client: CAData holds no PEM certificate")
	}
	tlsConfig.RootCAs = pool
	return tlsConfig, nil
}

// loadClientCert adds the client certificate of cfg (files or bytes) to
// tlsConfig, if it names one.
func loadClientCert(tlsConfig *tls.Config, cfg Config) error {
	cert, key := cfg.CertData, cfg.KeyData
	var err error
	if len(cert) == 0 && cfg.CertFile != "" {
		if cert, err = os.ReadFile(cfg.CertFile); err != nil {
			return fmt.Errorf("client: reading CertFile: %w", err)
		}
	}
	if len(key) == 0 && cfg.KeyFile != "" {
		if key, err = os.ReadFile(cfg.KeyFile); err != nil {
			return fmt.Errorf("client: reading KeyFile: %w", err)
		}
	}
	if len(cert) == 0 && len(key) == 0 {
		return nil
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return fmt.Errorf("client: the client certificate and key: %w", err)
	}
	tlsConfig.Certificates = []tls.Certificate{pair}
	return nil
}

// newHTTPClient is Config.HTTPClient, or one of our own (HTTP/2 with
// client-go's health check unless DisableHTTP2), wrapped to fail over
// between base and the FailoverHosts if there are any.
func newHTTPClient(cfg Config, tlsConfig *tls.Config, base *url.URL) (*http.Client, error) {
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// A copy: HTTP/2 adds "h2" to its ALPN protocols, which a
		// websocket's own TLS connection must not offer.
		t.TLSClientConfig = tlsConfig.Clone()
		if cfg.DisableHTTP2 {
			// A non-nil, empty TLSNextProto turns net/http's own HTTP/2 off.
			t.ForceAttemptHTTP2 = false
			t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		} else if err := configureHTTP2(t, cfg.HTTP2ReadIdleTimeout, cfg.HTTP2PingTimeout); err != nil {
			return nil, err
		}
		// No Client.Timeout: it would cut every watch. Each call is
		// bounded by its context instead.
		httpClient = &http.Client{Transport: t}
	}
	if len(cfg.FailoverHosts) == 0 {
		return httpClient, nil
	}
	f := &failover{next: httpClient.Transport, hosts: []*url.URL{base}, tr: cfg.Tracer}
	if f.next == nil {
		f.next = http.DefaultTransport
	}
	for _, h := range cfg.FailoverHosts {
		u, err := parseHost(h, cfg.CAFile != "" || cfg.Insecure)
		if err != nil {
			return nil, fmt.Errorf("client: Config.FailoverHosts: %w", err)
		}
		f.hosts = append(f.hosts, u)
	}
	hc := *httpClient
	hc.Transport = f
	return &hc, nil
}
