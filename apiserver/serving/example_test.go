package serving_test

import (
	"fmt"
	"strings"

	"listwatch/apiserver/serving"
)

// The kubeconfig a server with a generated certificate hands out: kubectl
// --kubeconfig and client-go's clientcmd read it as it is.
func ExampleKubeconfig() {
	kc := string(serving.Kubeconfig("https://127.0.0.1:6443", []byte("PEM"), "s3cret"))
	for line := range strings.SplitSeq(strings.TrimSpace(kc), "\n") {
		fmt.Println(line)
	}
	// Output:
	// apiVersion: v1
	// kind: Config
	// clusters:
	// - name: listwatch
	//   cluster:
	//     server: https://127.0.0.1:6443
	//     certificate-authority-data: UEVN
	// users:
	// - name: listwatch
	//   user:
	//     token: s3cret
	// contexts:
	// - name: listwatch
	//   context:
	//     cluster: listwatch
	//     user: listwatch
	// current-context: listwatch
}
