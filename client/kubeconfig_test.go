package client

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

// A kubeconfig as cmd/apiserver --tls writes it (CA inline, a token)
// reaches a TLS server that checks the token.
func TestConfigFromKubeconfigReachesATLSServer(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"default","resourceVersion":"7"}}`)
	}))
	defer ts.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	dir := t.TempDir()
	path := writeFile(t, dir, "kubeconfig", fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: u
  user:
    token: s3cret
contexts:
- name: ctx
  context:
    cluster: c
    user: u
    namespace: team
current-context: ctx
`, ts.URL, base64.StdEncoding.EncodeToString(ca)))

	cfg, err := ConfigFromKubeconfig(path, "")
	require.NoError(t, err)
	assert.Equal(t, ts.URL, cfg.Host)
	assert.Equal(t, "s3cret", cfg.BearerToken)
	c, err := New(cfg)
	require.NoError(t, err)
	obj, err := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default").Get(context.Background(), "a")
	require.NoError(t, err, "the CA from the kubeconfig verifies the server, the token is accepted")
	assert.Equal(t, "7", obj.Metadata.ResourceVersion)
}

func TestConfigFromKubeconfigResolvesFilesAndContexts(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "token", "from-file\n")
	path := writeFile(t, dir, "kubeconfig", `clusters:
- name: a
  cluster: {server: "https://10.0.0.1:6443", certificate-authority: ca.crt}
- name: b
  cluster: {server: "https://10.0.0.2:6443", insecure-skip-tls-verify: true}
users:
- name: file
  user: {tokenFile: token, client-certificate: /abs/cert.pem, client-key: key.pem}
- name: plugin
  user: {exec: {command: aws}}
- name: basic
  user: {username: admin, password: x}
contexts:
- {name: one, context: {cluster: a, user: file}}
- {name: two, context: {cluster: b}}
- {name: three, context: {cluster: b, user: plugin}}
- {name: four, context: {cluster: b, user: basic}}
- {name: five, context: {cluster: nowhere}}
current-context: one
`)
	cfg, err := ConfigFromKubeconfig(path, "")
	require.NoError(t, err)
	assert.Equal(t, Config{Host: "https://10.0.0.1:6443", CAFile: filepath.Join(dir, "ca.crt"), BearerToken: "from-file",
		CertFile: "/abs/cert.pem", KeyFile: filepath.Join(dir, "key.pem")}, cfg, "relative names are relative to the kubeconfig")

	cfg, err = ConfigFromKubeconfig(path, "two")
	require.NoError(t, err)
	assert.Equal(t, Config{Host: "https://10.0.0.2:6443", Insecure: true}, cfg, "a context without a user sends no credentials")

	for name, want := range map[string]string{
		"three":   `user "plugin" authenticates with an exec plugin`,
		"four":    `user "basic" authenticates with a username and password`,
		"five":    `cluster "nowhere" not found`,
		"missing": `context "missing" not found`,
	} {
		_, err := ConfigFromKubeconfig(path, name)
		assert.ErrorContains(t, err, want, name)
	}
	_, err = ConfigFromKubeconfig(filepath.Join(dir, "absent"), "")
	assert.ErrorIs(t, err, os.ErrNotExist)
	bad := writeFile(t, dir, "bad", "clusters: [\n")
	_, err = ConfigFromKubeconfig(bad, "")
	assert.ErrorContains(t, err, "kubeconfig "+bad)
}

func TestClientCertificateIsLoadedOrRefused(t *testing.T) {
	_, err := New(Config{Host: "https://127.0.0.1:1", CertData: []byte("not pem"), KeyData: []byte("nor this")})
	assert.ErrorContains(t, err, "the client certificate and key")
	_, err = New(Config{Host: "https://127.0.0.1:1", CertFile: "/nonexistent/cert.pem"})
	assert.ErrorContains(t, err, "reading CertFile")
}
