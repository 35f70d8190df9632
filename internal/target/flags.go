package target

import "flag"

// Flags are where to point: -server, -token and -namespace.
type Flags struct {
	// Server is the shared apiserver's URL; "" starts one in-process.
	Server string
	// Token is sent as "Authorization: Bearer <token>" (cmd/apiserver
	// --token); "" sends none.
	Token string
	// Namespace is where the program creates and watches its objects.
	Namespace string
}

// DefaultNamespace is the namespace used when -namespace is not given.
const DefaultNamespace = "default"

// Register adds -server, -token and -namespace to fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Server, "server", "", "a shared apiserver's URL, e.g. http://127.0.0.1:8080 (go run ./cmd/apiserver); empty: start our own in-process")
	fs.StringVar(&f.Token, "token", "", "bearer token for -server, if it was started with --token")
	fs.StringVar(&f.Namespace, "namespace", DefaultNamespace, "the namespace to work in; on a shared server, one of your own (created if missing)")
}

// Shared reports whether the flags name a shared server.
func (f Flags) Shared() bool { return f.Server != "" }
