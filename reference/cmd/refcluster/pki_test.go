package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The serving certificate must verify, against the CA the kubeconfig
// carries, for every address a client dials.
func TestServingCertificateVerifiesForLoopback(t *testing.T) {
	dir := t.TempDir()
	p, err := writePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.caPEM) {
		t.Fatal("CA PEM holds no certificate")
	}
	data, err := os.ReadFile(filepath.Join(dir, servingCert))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "::1", "localhost", "kubernetes.default.svc", firstServiceIP} {
		opts := x509.VerifyOptions{DNSName: name, Roots: pool}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
}

// The token file is kube-apiserver's CSV (token,user,uid,"groups") and the
// kubeconfig carries the same token and the CA.
func TestTokenFileAndKubeconfigAgree(t *testing.T) {
	dir := t.TempDir()
	p, err := writePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	want := p.token + `,reference-admin,reference-admin,"system:masters"` + "\n"
	if string(csv) != want {
		t.Errorf("token file = %q, want %q", csv, want)
	}
	path, err := writeKubeconfig(dir, "https://127.0.0.1:16443", p)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server: https://127.0.0.1:16443", "token: " + p.token, "current-context: reference"} {
		if !strings.Contains(string(kc), want) {
			t.Errorf("kubeconfig lacks %q:\n%s", want, kc)
		}
	}
}
