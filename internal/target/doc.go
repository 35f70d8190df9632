// Package target decides where a demo program's client points: at an
// apiserver of its own, started in-process on a free loopback port (the
// default, so every example runs alone), or at a shared one named by
// -server, as in a workshop where the instructor runs one
// `go run ./cmd/apiserver` for the whole room and every attendee works in
// a namespace of their own (-namespace).
//
// It is demo plumbing, not list-watch machinery: the examples under
// examples/ and the workshop's programs under workshop/ use it so that the
// -server, -token and -namespace flags mean the same everywhere. Kubernetes'
// equivalent is a kubeconfig (client-go's clientcmd): a server address,
// credentials and a default namespace, chosen by context.
//
// Read flags.go (the three flags), then target.go (Open: own server or
// shared one; the namespace created if missing), then faults.go (the
// workshop fault switches, called in-process or over HTTP).
package target
