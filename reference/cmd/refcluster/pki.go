package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files start writes into the state directory, named as kubeadm names
// them (cmd/kubeadm/app/constants/constants.go: ca.crt, apiserver.crt,
// sa.key, sa.pub) so a reader who knows a kubeadm cluster finds them.
const (
	caCertFile     = "ca.crt"
	caKeyFile      = "ca.key"
	servingCert    = "apiserver.crt"
	servingKey     = "apiserver.key"
	saKeyFile      = "sa.key"
	saPubFile      = "sa.pub"
	tokenFile      = "tokens.csv"
	kubeconfigFile = "kubeconfig"
)

// pki is what a cluster's clients and servers trust: a CA, the serving
// certificate it signed, and the bearer token of the one user.
type pki struct {
	caPEM []byte
	token string
}

// writePKI creates a new CA, a serving certificate for the loopback
// addresses, the service-account key pair and the token file. Everything is
// new on every start: nothing here is a secret worth keeping.
func writePKI(dir string) (pki, error) {
	caKey, caCert, caPEM, err := newCA()
	if err != nil {
		return pki{}, err
	}
	if err := writePEM(dir, caCertFile, "CERTIFICATE", caCert.Raw); err != nil {
		return pki{}, err
	}
	if err := writeKey(dir, caKeyFile, caKey); err != nil {
		return pki{}, err
	}
	if err := writeServingCert(dir, caKey, caCert); err != nil {
		return pki{}, err
	}
	// kube-apiserver signs service-account tokens with sa.key and checks
	// them with sa.pub; kube-controller-manager signs the legacy
	// Secret-based tokens with it (--service-account-private-key-file).
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return pki{}, fmt.Errorf("service-account key: %w", err)
	}
	if err := writeKey(dir, saKeyFile, saKey); err != nil {
		return pki{}, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return pki{}, fmt.Errorf("service-account public key: %w", err)
	}
	if err := writePEM(dir, saPubFile, "PUBLIC KEY", pub); err != nil {
		return pki{}, err
	}
	token, err := writeTokenFile(dir)
	if err != nil {
		return pki{}, err
	}
	return pki{caPEM: caPEM, token: token}, nil
}

func newCA() (*ecdsa.PrivateKey, *x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "listwatch-reference-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("CA certificate: %w", err)
	}
	return key, cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// writeServingCert signs kube-apiserver's serving certificate: valid for
// the loopback addresses a client dials, and for the names and the first
// service IP that in-cluster clients use for the "kubernetes" Service.
func writeServingCert(dir string, caKey *ecdsa.PrivateKey, ca *x509.Certificate) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback, net.ParseIP(firstServiceIP)},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	if err := writePEM(dir, servingCert, "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(dir, servingKey, key)
}

// writeTokenFile writes kube-apiserver's --token-auth-file: one line,
// "token,user,uid,groups". The group system:masters passes every
// authorizer, RBAC included (the superuser group that
// plugin/pkg/auth/authorizer/rbac's bootstrap policy binds to cluster-admin).
func writeTokenFile(dir string) (string, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	token := hex.EncodeToString(raw)
	line := fmt.Sprintf("%s,reference-admin,reference-admin,\"system:masters\"\n", token)
	if err := os.WriteFile(filepath.Join(dir, tokenFile), []byte(line), 0o600); err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	return token, nil
}

func writeKey(dir, name string, key any) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return writePEM(dir, name, "PRIVATE KEY", der)
}

func writePEM(dir, name, blockType string, der []byte) error {
	data := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
