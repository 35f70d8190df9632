package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// recorder holds what a run needs: where to send, where to write.
type recorder struct {
	target   target
	etcdURL  string
	stateDir string
	previous string // the recordings keep steps copy from
	script   string
	outDir   string
	server   string // the Server line of every entry
	vars     map[string]string

	// log gets one line per step; results, every recorded exchange (the
	// differential runner compares them); ours marks a run against our
	// server, which compacts through its fault switch and is not
	// restarted (see diff.go).
	log     io.Writer
	results []result
	ours    bool

	// entries of the README, by section, sections in script order.
	sections     map[string][]string
	sectionOrder []string
}

// run performs one step: a request (recorded if it names a file), or one
// of the actions that are no request (compaction, restart, keep).
func (r *recorder) run(ctx context.Context, s step) error {
	switch {
	case s.CompactEtcd && r.ours:
		return r.compactOurs(ctx)
	case s.RestartAPIServer && r.ours:
		return nil // compactOurs already expired every older resourceVersion
	case s.CompactEtcd:
		rev, err := compactEtcd(ctx, r.etcdURL)
		if err != nil {
			return err
		}
		r.vars["compactedRevision"] = fmt.Sprint(rev)
		fmt.Fprintf(r.log, "compacted etcd to revision %d\n", rev)
		return nil
	case s.RestartAPIServer:
		return r.restartAPIServer(ctx)
	case s.Keep:
		entry, err := keep(r.previous, r.outDir, s)
		if err != nil {
			return err
		}
		r.addEntry(s.Section, entry)
		return nil
	case s.HTTP2:
		return r.runHTTP2(ctx, s)
	}
	path, err := expand(s.Path, r.vars)
	if err != nil {
		return err
	}
	body, err := expand(s.Body, r.vars)
	if err != nil {
		return err
	}
	if s.Headers, err = expandAll(s.Headers, r.vars); err != nil {
		return err
	}
	resp, err := r.send(ctx, s, path, body)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.log, "%-6s %-70s %s %d bytes\n", s.Method, path, resp.status, len(resp.body))
	for name, jsonPath := range s.Set {
		v, err := lookup(resp.body, jsonPath)
		r.vars[name] = v // ours goes on without it (see replay)
		if err != nil && !r.ours {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	for name, header := range s.SetHeader {
		if r.vars[name] = resp.header.Get(header); r.vars[name] == "" && !r.ours {
			return fmt.Errorf("set %s: no %s header", name, header)
		}
	}
	switch {
	case s.File == "":
		return nil
	case s.HeadersOnly:
		return r.saveHeaders(s, path, resp)
	}
	recorded := s
	recorded.Body = body
	recorded.Note, err = expand(s.Note, r.vars)
	if err != nil {
		return err
	}
	r.results = append(r.results, result{file: s.File, status: resp.status,
		contentType: resp.header.Get("Content-Type"), body: resp.body})
	entry, err := save(r.outDir, r.server, recorded, path, resp)
	r.addEntry(s.Section, entry)
	return err
}

// send makes one exchange of a step: a WebSocket or a plain request,
// repeated while UntilStatus asks for another status or UntilCondition
// for a condition not yet True.
func (r *recorder) send(ctx context.Context, s step, path, body string) (*response, error) {
	var during func() error
	if len(s.During) > 0 {
		during = func() error { return r.runDuring(ctx, s.During) }
	}
	wait := time.Duration(s.MaxSeconds * float64(time.Second))
	if wait == 0 {
		wait = time.Minute // a safety net: a plain request answers at once
	}
	for attempt := 1; ; attempt++ {
		var resp *response
		var err error
		if s.Websocket {
			closeAfter := time.Duration(s.CloseAfterSeconds * float64(time.Second))
			resp, err = r.target.websocket(ctx, path, s.Headers, closeAfter, wait, during)
		} else {
			resp, err = r.target.exchange(ctx, r.target.requestBytes(s.Method, path, s.Headers, body), wait, s.Events, during)
		}
		if err != nil || s.done(resp) {
			return resp, err
		}
		if attempt == 120 {
			return nil, fmt.Errorf("still %s after %d attempts, want status %q, condition %q", resp.status, attempt, s.UntilStatus, s.UntilCondition)
		}
		if err := pause(ctx, time.Second); err != nil {
			return nil, err
		}
	}
}

// runDuring sends the steps made while a watch is open, each after a
// pause, so that every event is written on its own, as a person's
// commands would be.
func (r *recorder) runDuring(ctx context.Context, steps []step) error {
	for _, s := range steps {
		p := s.PauseSeconds
		if p == 0 {
			p = 0.8
		}
		if err := pause(ctx, time.Duration(p*float64(time.Second))); err != nil {
			return err
		}
		if err := r.run(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// restartAPIServer runs refcluster restart-apiserver, from this module.
func (r *recorder) restartAPIServer(ctx context.Context) error {
	etcd, err := url.Parse(r.etcdURL)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "run", "./cmd/refcluster", "restart-apiserver", "-state", r.stateDir,
		"-port", r.target.port(), "-etcd-port", etcd.Port())
	cmd.Stdout, cmd.Stderr = r.log, r.log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("restart kube-apiserver: %w", err)
	}
	return nil
}

// saveHeaders appends one response's status line and headers to s.File;
// the step that says what they demonstrate adds the README entry.
func (r *recorder) saveHeaders(s step, path string, resp *response) error {
	f, err := os.OpenFile(filepath.Join(r.outDir, s.File), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", s.File, err)
	}
	defer f.Close()
	sum := sha256.Sum256(resp.body)
	fmt.Fprintf(f, "## GET %s - headers %s\n%s\n", path, requestHeaders(s), resp.status)
	for _, k := range resp.headerKeys {
		v := strings.Join(resp.header[k], ", ")
		if everyResponse(k) {
			v = "<masked>"
		}
		fmt.Fprintf(f, "%s: %s\n", k, v)
	}
	fmt.Fprintf(f, "(body %d bytes, sha256 %x, not kept)\n\n", len(resp.body), sum)
	if s.Demonstrates != "" {
		r.addEntry(s.Section, fmt.Sprintf("### `%s`\n\n* Server: %s\n* Request: `GET %s` several times, as the file lists\n"+
			"* Response: status line and headers only, as text (values that differ on every request masked), with the body's size and sha256\n"+
			"* Recorded at %s\n* Demonstrates: %s\n\n", s.File, r.server, path, resp.sent.UTC().Format(time.RFC3339), s.Demonstrates))
	}
	return nil
}

func (r *recorder) addEntry(section, entry string) {
	if _, seen := r.sections[section]; !seen {
		r.sectionOrder = append(r.sectionOrder, section)
	}
	r.sections[section] = append(r.sections[section], entry)
}

// writeIndex writes README.md: the head and tail kept beside the script
// (what no single recording says), and between them every entry under
// its section.
func (r *recorder) writeIndex() error {
	dir := filepath.Dir(r.script)
	head, err := os.ReadFile(filepath.Join(dir, "README-head.md"))
	if err != nil {
		return fmt.Errorf("README head: %w", err)
	}
	tail, err := os.ReadFile(filepath.Join(dir, "README-tail.md"))
	if err != nil {
		return fmt.Errorf("README tail: %w", err)
	}
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(string(head), "{{date}}", time.Now().UTC().Format("2006-01-02")))
	for _, sec := range r.sectionOrder {
		if len(r.sections[sec]) == 0 {
			continue
		}
		if sec != "" {
			fmt.Fprintf(&b, "\n## %s\n\n", sec)
		}
		b.WriteString(strings.Join(r.sections[sec], ""))
	}
	b.WriteString("\n")
	b.Write(tail)
	return os.WriteFile(filepath.Join(r.outDir, "README.md"), []byte(b.String()), 0o644)
}

// done reports whether an answer ends a step's repeats: it has the status
// UntilStatus asks for and the condition UntilCondition asks for.
func (s step) done(resp *response) bool {
	if !strings.HasPrefix(resp.status, s.UntilStatus) {
		return false
	}
	if s.UntilCondition == "" {
		return true
	}
	var obj struct {
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(resp.body, &obj) != nil {
		return false
	}
	for _, c := range obj.Status.Conditions {
		if c.Type == s.UntilCondition {
			return c.Status == "True"
		}
	}
	return false
}
