package serving

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// anyToken is the token of a kubeconfig for a server that asks for none:
// it accepts any, and kubectl, seeing a user with no credentials at all
// for an https server, would prompt for a username instead of connecting.
const anyToken = "listwatch-any-token"

// Kubeconfig returns a kubeconfig for server (an https URL) that trusts
// caPEM and sends token as a bearer token (a placeholder if "", which a
// server without a token accepts): what kubectl --kubeconfig and
// client-go's clientcmd read. One cluster, one user, one context, all
// named "listwatch", and that context current.
func Kubeconfig(server string, caPEM []byte, token string) []byte {
	if token == "" {
		token = anyToken
	}
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- name: listwatch\n  cluster:\n")
	fmt.Fprintf(&b, "    server: %s\n", server)
	if len(caPEM) > 0 {
		fmt.Fprintf(&b, "    certificate-authority-data: %s\n", base64.StdEncoding.EncodeToString(caPEM))
	}
	fmt.Fprintf(&b, "users:\n- name: listwatch\n  user:\n    token: %s\n", token)
	b.WriteString("contexts:\n- name: listwatch\n  context:\n    cluster: listwatch\n    user: listwatch\ncurrent-context: listwatch\n")
	return []byte(b.String())
}
