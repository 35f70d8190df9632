package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// writeKubeconfig writes the kubeconfig kubectl and client-go read: one
// cluster (the loopback URL and the CA, inline), one user (the bearer
// token), one context, current. Written as text: the format is small and
// the module has no YAML library to spare.
func writeKubeconfig(dir, server string, p pki) (string, error) {
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: reference
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: reference-admin
  user:
    token: %s
contexts:
- name: reference
  context:
    cluster: reference
    user: reference-admin
    namespace: default
current-context: reference
`, server, base64.StdEncoding.EncodeToString(p.caPEM), p.token)
	path := filepath.Join(dir, kubeconfigFile)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, nil
}
