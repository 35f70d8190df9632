// Package demo holds the few lines every example would otherwise repeat:
// starting our apiserver in-process, a client for ConfigMaps, labelled
// output, the -trace switch, and a network "cable" that can be unplugged.
// Nothing here is list-watch machinery; read the examples' main.go files
// for that.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/narrate"
)

// ConfigMaps is the resource every example watches: cheap, namespaced, and
// present on every real cluster too.
var ConfigMaps = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// Namespace is where the examples create their objects.
const Namespace = "default"

// Printer writes one labelled line at a time: the label in a fixed-width
// column, then the message. Safe for concurrent use.
type Printer struct {
	mu     sync.Mutex
	w      io.Writer
	colour bool
}

// labelWidth fits the longest label the examples use, and is the width of
// the narration's layer column (narrate's longest layer, "streamwatcher"),
// so that an example's own lines and the narration it shows line up.
const labelWidth = len(narrate.StreamWatcher)

// NewPrinter prints to w, with coloured labels when w is a terminal.
func NewPrinter(w io.Writer) *Printer {
	return &Printer{w: w, colour: IsTerminal(w)}
}

// Say prints "label     message".
func (p *Printer) Say(label, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.colour {
		fmt.Fprintf(p.w, "\x1b[1m%-*s\x1b[0m %s\n", labelWidth, label, msg)
		return
	}
	fmt.Fprintf(p.w, "%-*s %s\n", labelWidth, label, msg)
}

// Section prints a heading line, "== title", preceded by a blank line.
func (p *Printer) Section(format string, args ...any) {
	title := fmt.Sprintf(format, args...)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.colour {
		fmt.Fprintf(p.w, "\n\x1b[1;4m== %s\x1b[0m\n", title)
		return
	}
	fmt.Fprintf(p.w, "\n== %s\n", title)
}

// IsTerminal reports whether w is a terminal (colour helps there, and only
// there).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Tracer returns the narrate.Tracer behind every example's -trace flag: one
// line per step of every layer on stdout, or nil (silent) when off.
func Tracer(on bool) *narrate.Tracer {
	if !on {
		return nil
	}
	return narrate.New(os.Stdout, narrate.WithColour(IsTerminal(os.Stdout)))
}

// Start starts our apiserver in-process on a free loopback port and
// returns it with a client for ConfigMaps in Namespace. Call the returned
// stop function before exiting: it ends every watch cleanly.
func Start(ctx context.Context, cfg apiserver.Config, ccfg client.Config) (*apiserver.Server, *client.ResourceClient, func(), error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	srv, err := apiserver.Start(ctx, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	}
	ccfg.Host = srv.URL()
	c, err := client.New(ccfg)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	return srv, c.Resource(ConfigMaps).Namespace(Namespace), stop, nil
}

// ConfigMap builds a ConfigMap in Namespace with the given data and labels
// (either may be nil).
func ConfigMap(name string, data, labels map[string]string) *api.Object {
	obj := &api.Object{
		APIVersion: "v1",
		Kind:       "ConfigMap",
		Metadata:   api.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
	}
	if len(data) > 0 {
		// encoding/json sorts map keys, so the object is the same every run.
		raw, err := json.Marshal(data)
		if err == nil {
			_ = obj.Set("data", raw)
		}
	}
	return obj
}

// Data returns one key of a ConfigMap's data, or "".
func Data(obj *api.Object, key string) string {
	raw := obj.Get("data")
	if raw == nil {
		return ""
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return ""
	}
	return m[key]
}

// Fail prints err on stderr and exits 1: an example that could not show
// what it promised must not exit 0, or its test would pass on nothing.
func Fail(err error) {
	fmt.Fprintln(os.Stderr, "FAILED:", err)
	os.Exit(1)
}

// Check calls Fail with a formatted error unless ok.
func Check(ok bool, format string, args ...any) {
	if !ok {
		Fail(fmt.Errorf(format, args...))
	}
}
