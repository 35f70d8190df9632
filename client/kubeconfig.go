package client

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A kubeconfig is how every Kubernetes client is told where its cluster is
// and who it is: clusters (a server URL and the CA to trust), users
// (credentials), and contexts that pair one of each, one of them current.
// kubectl --kubeconfig, kube-controller-manager --kubeconfig and
// client-go's clientcmd all read the same file; cmd/apiserver --tls writes
// one. This file reads the parts a list-watch client needs, as
// client-go's tools/clientcmd does (loader.go LoadFromFile and
// ResolvePaths, client_config.go DirectClientConfig.ClientConfig), for one
// file: clientcmd also merges the files $KUBECONFIG lists, which we do not.

// kubeconfig is clientcmd/api/v1's Config, the fields we read.
type kubeconfig struct {
	Clusters []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Token                 string         `yaml:"token"`
			TokenFile             string         `yaml:"tokenFile"`
			ClientCertificate     string         `yaml:"client-certificate"`
			ClientCertificateData string         `yaml:"client-certificate-data"`
			ClientKey             string         `yaml:"client-key"`
			ClientKeyData         string         `yaml:"client-key-data"`
			Username              string         `yaml:"username"`
			Exec                  map[string]any `yaml:"exec"`
			AuthProvider          map[string]any `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster   string `yaml:"cluster"`
			User      string `yaml:"user"`
			Namespace string `yaml:"namespace"`
		} `yaml:"context"`
	} `yaml:"contexts"`
	CurrentContext string `yaml:"current-context"`
}

// ConfigFromKubeconfig reads the kubeconfig file at path and returns the
// Config of the context named contextName ("" for its current-context):
// the cluster's server and CA (inline or a file; or
// insecure-skip-tls-verify), and the user's bearer token (inline or
// tokenFile) or client certificate and key (inline or files). Relative
// file names are relative to the kubeconfig's directory, as clientcmd
// resolves them. A user that authenticates by exec plugin, auth provider
// or basic auth is an error naming what is missing, not a client that
// would be refused later.
func ConfigFromKubeconfig(path, contextName string) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("kubeconfig: %w", err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		return Config{}, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg, err := kc.resolve(contextName, filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// resolve turns the named (or current) context into a Config, reading the
// files the kubeconfig names relative to dir.
func (kc *kubeconfig) resolve(contextName, dir string) (Config, error) {
	if contextName == "" {
		contextName = kc.CurrentContext
	}
	if contextName == "" {
		return Config{}, errors.New("no current-context and no context named")
	}
	i := indexOf(len(kc.Contexts), func(i int) string { return kc.Contexts[i].Name }, contextName)
	if i < 0 {
		return Config{}, fmt.Errorf("context %q not found", contextName)
	}
	ctx := kc.Contexts[i].Context
	var cfg Config
	if err := kc.resolveCluster(&cfg, ctx.Cluster, dir); err != nil {
		return Config{}, err
	}
	if ctx.User == "" {
		return cfg, nil // no credentials: a server that asks for none
	}
	if err := kc.resolveUser(&cfg, ctx.User, dir); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func (kc *kubeconfig) resolveCluster(cfg *Config, name, dir string) error {
	i := indexOf(len(kc.Clusters), func(i int) string { return kc.Clusters[i].Name }, name)
	if i < 0 {
		return fmt.Errorf("cluster %q not found", name)
	}
	c := kc.Clusters[i].Cluster
	if c.Server == "" {
		return fmt.Errorf("cluster %q has no server", name)
	}
	cfg.Host = c.Server
	cfg.Insecure = c.InsecureSkipTLSVerify
	cfg.CAFile = resolvePath(c.CertificateAuthority, dir)
	var err error
	if cfg.CAData, err = decodeData("certificate-authority-data", c.CertificateAuthorityData); err != nil {
		return fmt.Errorf("cluster %q: %w", name, err)
	}
	return nil
}

func (kc *kubeconfig) resolveUser(cfg *Config, name, dir string) error {
	i := indexOf(len(kc.Users), func(i int) string { return kc.Users[i].Name }, name)
	if i < 0 {
		return fmt.Errorf("user %q not found", name)
	}
	u := kc.Users[i].User
	switch {
	case u.Exec != nil:
		return fmt.Errorf("user %q authenticates with an exec plugin, which this client does not run", name)
	case u.AuthProvider != nil:
		return fmt.Errorf("user %q authenticates with an auth provider, which this client does not support", name)
	case u.Username != "":
		return fmt.Errorf("user %q authenticates with a username and password, which this client does not send", name)
	}
	cfg.BearerToken = u.Token
	if cfg.BearerToken == "" && u.TokenFile != "" {
		tok, err := os.ReadFile(resolvePath(u.TokenFile, dir))
		if err != nil {
			return fmt.Errorf("user %q: tokenFile: %w", name, err)
		}
		cfg.BearerToken = strings.TrimSpace(string(tok))
	}
	cfg.CertFile, cfg.KeyFile = resolvePath(u.ClientCertificate, dir), resolvePath(u.ClientKey, dir)
	var err error
	if cfg.CertData, err = decodeData("client-certificate-data", u.ClientCertificateData); err != nil {
		return fmt.Errorf("user %q: %w", name, err)
	}
	if cfg.KeyData, err = decodeData("client-key-data", u.ClientKeyData); err != nil {
		return fmt.Errorf("user %q: %w", name, err)
	}
	return nil
}

// indexOf finds the entry named name among n named entries.
func indexOf(n int, nameOf func(int) string, name string) int {
	for i := range n {
		if nameOf(i) == name {
			return i
		}
	}
	return -1
}

// resolvePath makes a relative file name relative to dir.
func resolvePath(p, dir string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// decodeData decodes a kubeconfig's base64 *-data field.
func decodeData(field, s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return b, nil
}
