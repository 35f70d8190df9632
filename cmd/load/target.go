package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"listwatch/client"
)

// target is the server a run loads: its base URL and, for an https server
// read from a kubeconfig (the reference's, or cmd/apiserver --tls's), the
// TLS settings and bearer token every request carries. Each transport it
// makes is new, so a client given one has connections of its own, as a
// separate process would.
type target struct {
	base  string
	tls   *tls.Config // nil for plain http
	token string
}

// plainTarget is a server at a plain-http URL that asks for no credentials.
func plainTarget(base string) *target { return &target{base: strings.TrimSuffix(base, "/")} }

// kubeconfigTarget reads the current context of a kubeconfig: the server,
// its CA (or insecure-skip-tls-verify), and a bearer token or client
// certificate.
func kubeconfigTarget(path string) (*target, error) {
	cfg, err := client.ConfigFromKubeconfig(path, "")
	if err != nil {
		return nil, err
	}
	t := &target{base: strings.TrimSuffix(cfg.Host, "/"), token: cfg.BearerToken}
	if !strings.HasPrefix(t.base, "https://") {
		return t, nil
	}
	t.tls = &tls.Config{InsecureSkipVerify: cfg.Insecure} //nolint:gosec // the kubeconfig's choice
	if cfg.CAFile != "" || len(cfg.CAData) > 0 {
		pem := cfg.CAData
		if cfg.CAFile != "" {
			if pem, err = os.ReadFile(cfg.CAFile); err != nil {
				return nil, fmt.Errorf("kubeconfig CA: %w", err)
			}
		}
		t.tls.RootCAs = x509.NewCertPool()
		if !t.tls.RootCAs.AppendCertsFromPEM(pem) {
			return nil, errors.New("kubeconfig CA holds no PEM certificate")
		}
	}
	if len(cfg.CertData) > 0 || cfg.CertFile != "" {
		pair, err := loadPair(cfg)
		if err != nil {
			return nil, err
		}
		t.tls.Certificates = []tls.Certificate{pair}
	}
	return t, nil
}

// loadPair is the kubeconfig user's client certificate and key.
func loadPair(cfg client.Config) (tls.Certificate, error) {
	cert, key := cfg.CertData, cfg.KeyData
	var err error
	if len(cert) == 0 {
		if cert, err = os.ReadFile(cfg.CertFile); err != nil {
			return tls.Certificate{}, fmt.Errorf("kubeconfig client certificate: %w", err)
		}
	}
	if len(key) == 0 {
		if key, err = os.ReadFile(cfg.KeyFile); err != nil {
			return tls.Certificate{}, fmt.Errorf("kubeconfig client key: %w", err)
		}
	}
	return tls.X509KeyPair(cert, key)
}

// client is an HTTP client on a transport of its own, tuned by tune (nil:
// Go's defaults). Over https it negotiates HTTP/2 as client-go does, and
// it sends the token with every request.
func (t *target) client(tune func(*http.Transport)) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if t.tls != nil {
		tr.TLSClientConfig = t.tls.Clone()
		tr.ForceAttemptHTTP2 = true
	}
	if tune != nil {
		tune(tr)
	}
	if t.token == "" {
		return &http.Client{Transport: tr}
	}
	return &http.Client{Transport: &bearer{next: tr, token: t.token}}
}

// bearer adds "Authorization: Bearer <token>" to every request.
type bearer struct {
	next  *http.Transport
	token string
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// transport underneath.
func (b *bearer) CloseIdleConnections() { b.next.CloseIdleConnections() }
