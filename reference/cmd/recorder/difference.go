package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// difference is one way our answer to a recorded request differs from
// kube-apiserver's, once what differs on every run is set aside.
type difference struct {
	file, path string
	ours, ref  string // "" where that side has nothing at path
}

func (d difference) String() string {
	switch {
	case d.ours == "":
		return fmt.Sprintf("%s %s: ours has nothing there, kube-apiserver 1.37 answers %s", d.file, d.path, d.ref)
	case d.ref == "":
		return fmt.Sprintf("%s %s: ours answers %s, kube-apiserver 1.37 has nothing there", d.file, d.path, d.ours)
	}
	return fmt.Sprintf("%s %s: ours answers %s, kube-apiserver 1.37 answers %s", d.file, d.path, d.ours, d.ref)
}

// compareResults compares the two runs recording by recording: status,
// Content-Type, then the body (JSON value by value, a watch stream event
// by event, text as a whole; binary bodies only by status and type).
func compareResults(ref, ours []result) []difference {
	byFile := map[string]result{}
	for _, o := range ours {
		byFile[o.file] = o
	}
	var diffs []difference
	for _, r := range ref {
		o, ok := byFile[r.file]
		if !ok {
			diffs = append(diffs, difference{file: r.file, path: "(the request)", ref: r.status})
			continue
		}
		if r.status != o.status {
			diffs = append(diffs, difference{file: r.file, path: "(status)", ours: o.status, ref: r.status})
		}
		if r.contentType != o.contentType {
			diffs = append(diffs, difference{file: r.file, path: "(Content-Type)", ours: quoted(o.contentType), ref: quoted(r.contentType)})
		}
		diffs = append(diffs, compareBodies(r.file, r.body, o.body)...)
	}
	return diffs
}

func quoted(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}

func compareBodies(file string, ref, ours []byte) []difference {
	if strings.HasSuffix(file, ".pb") {
		return nil // binary: uids and times inside cannot be set aside
	}
	var rv, ov any
	if json.Unmarshal(ref, &rv) == nil && json.Unmarshal(ours, &ov) == nil {
		var diffs []difference
		walkDiff(file, "", scrubForDiff(rv, ""), scrubForDiff(ov, ""), &diffs)
		return diffs
	}
	if rl, ol := jsonLines(ref), jsonLines(ours); rl != nil && ol != nil {
		rl, ol = withoutRepeatedBookmarks(rl), withoutRepeatedBookmarks(ol)
		var diffs []difference
		for i := range max(len(rl), len(ol)) {
			var r, o any
			if i < len(rl) {
				r = scrubForDiff(rl[i], "")
			}
			if i < len(ol) {
				o = scrubForDiff(ol[i], "")
			}
			walkDiff(file, fmt.Sprintf("event[%d]", i), r, o, &diffs)
		}
		return diffs
	}
	if !bytes.Equal(ref, ours) {
		return []difference{{file: file, path: "(body)", ours: short(string(ours)), ref: short(string(ref))}}
	}
	return nil
}

// withoutRepeatedBookmarks drops a BOOKMARK that repeats the event
// before it. kube-apiserver sends the bookmark due two seconds before a
// watch's deadline once or twice, by chance: its timer pops watchers by
// whole seconds since the cache started, up to a second early, and one
// popped before its time is put back for the same time and sent again
// (k8s.io/apiserver pkg/storage/cacher/cacher.go,
// popExpiredWatchersThreadUnsafe; cache_watcher.go, nextBookmarkTime).
// The repeat says nothing new, so neither side's counts.
func withoutRepeatedBookmarks(events []any) []any {
	out := make([]any, 0, len(events))
	for i, ev := range events {
		if i > 0 && isBookmark(ev) && render(scrubForDiff(ev, "")) == render(scrubForDiff(events[i-1], "")) {
			continue
		}
		out = append(out, ev)
	}
	return out
}

func isBookmark(ev any) bool {
	m, ok := ev.(map[string]any)
	return ok && m["type"] == "BOOKMARK"
}

// jsonLines decodes a watch stream (one JSON value a line); nil if any
// line is not JSON. An empty body is an empty stream.
func jsonLines(b []byte) []any {
	out := []any{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var v any
		if json.Unmarshal(sc.Bytes(), &v) != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// walkDiff records where two JSON values differ. A subtree one side
// lacks is one difference, not one per leaf.
func walkDiff(file, path string, ref, ours any, diffs *[]difference) {
	rm, rok := ref.(map[string]any)
	om, ook := ours.(map[string]any)
	if rok && ook {
		keys := map[string]bool{}
		for k := range rm {
			keys[k] = true
		}
		for k := range om {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			walkDiff(file, join(path, k), rm[k], om[k], diffs)
		}
		return
	}
	ra, rok := ref.([]any)
	oa, ook := ours.([]any)
	if rok && ook && len(ra) == len(oa) {
		for i := range ra {
			walkDiff(file, fmt.Sprintf("%s[%d]", path, i), ra[i], oa[i], diffs)
		}
		return
	}
	if rok && ook && walkKeyed(file, path, ra, oa, diffs) {
		return
	}
	rs, ostr := render(ref), render(ours)
	if rs != ostr {
		*diffs = append(*diffs, difference{file: file, path: path, ours: ostr, ref: rs})
	}
}

// identities are the members that name an element of a list, in the
// order they are tried: a discovery document's resources, groups and
// versions, a list's or a Table's objects.
var identities = [][]string{{"metadata", "name"}, {"object", "metadata", "name"}, {"name"}, {"resource"}, {"subresource"}, {"version"}}

// walkKeyed compares two lists of different lengths element by element
// by what names each element (resources[name=pods]), so one element more
// or less is one difference, not the whole list. It says false when no
// identity names every element of both lists once.
func walkKeyed(file, path string, ref, ours []any, diffs *[]difference) bool {
	for _, id := range identities {
		rk, ok1 := keyed(ref, id)
		ok, ok2 := keyed(ours, id)
		if !ok1 || !ok2 {
			continue
		}
		names := map[string]bool{}
		for k := range rk {
			names[k] = true
		}
		for k := range ok {
			names[k] = true
		}
		for _, k := range sortedKeys(names) {
			walkDiff(file, fmt.Sprintf("%s[%s=%s]", path, strings.Join(id, "."), k), rk[k], ok[k], diffs)
		}
		return true
	}
	return false
}

// keyed is a list's elements by the string at id, if every element has
// one and no two the same.
func keyed(list []any, id []string) (map[string]any, bool) {
	out := make(map[string]any, len(list))
	for _, el := range list {
		v := el
		for _, k := range id {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			v = m[k]
		}
		name, ok := v.(string)
		if _, dup := out[name]; !ok || dup {
			return nil, false
		}
		out[name] = el
	}
	return out, len(out) > 0
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// render is a value as the report shows it; "" for nothing at all.
func render(v any) string {
	if v == nil {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<none>", not "\u003cnone\u003e"
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return short(strings.TrimSuffix(b.String(), "\n"))
}

func short(s string) string {
	if len(s) > 160 {
		return s[:150] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

var (
	ageRE       = regexp.MustCompile(`^[0-9]+(s|m[0-9]*s?|h[0-9]*m?|d)$`)
	generatedRE = regexp.MustCompile(`^(kube-api-access-)[a-z0-9]{5}$`)
	ipRE        = regexp.MustCompile(`^10\.0\.0\.[0-9]+$`)
)

// scrubForDiff is normalise's scrub for two servers instead of two runs
// of one: besides uids, times and resourceVersions, the values that two
// servers must pick differently (Table ages, generated names, allocated
// addresses, Etags and hashes) are replaced by placeholders. "null"
// (JSON null) stays distinct from nothing at all.
func scrubForDiff(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			out[k] = scrubForDiff(val, k)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = scrubForDiff(x[i], key)
		}
		return out
	case string:
		switch {
		case volatile(key) || serverPicked(key):
			return "<" + key + ">"
		case key == "message":
			return digitsRE.ReplaceAllString(x, "N")
		case ageRE.MatchString(x):
			return "<age>"
		case generatedRE.MatchString(x):
			return generatedRE.ReplaceAllString(x, "${1}<generated>")
		case ipRE.MatchString(x):
			return "<allocated IP>"
		}
		return x
	case nil:
		return "null"
	}
	return v
}

// serverPicked are the members besides volatile's whose values each
// server picks itself: its address, the hashes in OpenAPI URLs, an
// allocated ClusterIP, and the times of conditions.
func serverPicked(key string) bool {
	switch key {
	case "serverAddress", "serverRelativeURL", "clusterIP", "lastTransitionTime", "lastUpdateTime", "lastProbeTime":
		return true
	}
	return false
}

// rule is one row of the table of explained differences: a glob of
// recordings, a regular expression of paths, and why ours differs.
// A path written with "where ours has nothing" after it explains only
// what kube-apiserver answers and ours lacks.
type rule struct {
	file, path, why string
	pathRE          *regexp.Regexp
	oursLacks       bool
}

// oursLacks is what a path cell ends with when its row explains only
// differences where ours has nothing.
const oursLacks = " where ours has nothing"

func explain(rules []rule, d difference) int {
	for i, r := range rules {
		if r.oursLacks && d.ours != "" {
			continue
		}
		if ok, _ := filepath.Match(r.file, d.file); ok && r.pathRE.MatchString(d.path) {
			return i
		}
	}
	return -1
}

// rulesHeading is the section of docs/kubectl-and-client-go.md whose
// table the runner reads: | recordings | path | why |.
const rulesHeading = "## What the differential runner finds"

func loadRules(page string) ([]rule, error) {
	data, err := os.ReadFile(page)
	if err != nil {
		return nil, fmt.Errorf("explanations: %w", err)
	}
	_, section, ok := strings.Cut(string(data), "\n"+rulesHeading+"\n")
	if !ok {
		return nil, fmt.Errorf("explanations: %s has no %q section", page, rulesHeading)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var rules []rule
	for _, line := range strings.Split(section, "\n") {
		// Cells are split on " | ", so a path's regular expression may
		// use | between alternatives as long as it has no spaces.
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "| `") || !strings.HasSuffix(line, " |") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ")
		if len(cells) != 3 || !strings.HasPrefix(strings.TrimSpace(cells[0]), "`") {
			continue
		}
		pathCell := strings.TrimSpace(cells[1])
		lacks := strings.HasSuffix(pathCell, oursLacks)
		r := rule{file: strings.Trim(strings.TrimSpace(cells[0]), "`"), path: strings.Trim(strings.TrimSuffix(pathCell, oursLacks), "`"),
			why: strings.TrimSpace(cells[2]), oursLacks: lacks}
		if r.pathRE, err = regexp.Compile("^(?:" + r.path + ")$"); err != nil {
			return nil, fmt.Errorf("explanations: path %q: %w", r.path, err)
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("explanations: no rows in %s's %q table", page, rulesHeading)
	}
	return rules, nil
}
