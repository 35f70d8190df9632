package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// compareDirs says, for every recording in newDir that oldDir also has,
// whether the two are byte-identical, the same once the values that
// differ on every run are set aside, or different, and then how.
func compareDirs(w io.Writer, oldDir, newDir string) error {
	entries, err := os.ReadDir(newDir)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "README.md" {
			continue
		}
		newBody, err := os.ReadFile(filepath.Join(newDir, name))
		if err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		oldBody, err := os.ReadFile(filepath.Join(oldDir, name))
		if err != nil {
			fmt.Fprintf(w, "%s: only in %s\n", name, newDir)
			continue
		}
		if bytes.Equal(oldBody, newBody) {
			fmt.Fprintf(w, "%s: byte-identical\n", name)
			continue
		}
		oldLines, newLines := normalise(oldBody), normalise(newBody)
		diff := lineDiff(oldLines, newLines)
		if len(diff) == 0 {
			fmt.Fprintf(w, "%s: same once uids, times and resourceVersions are set aside\n", name)
			continue
		}
		fmt.Fprintf(w, "%s: differs (- %s, + %s)\n", name, oldDir, newDir)
		for _, d := range diff {
			fmt.Fprintf(w, "    %s\n", d)
		}
	}
	return nil
}

// volatile are the fields whose values differ between any two runs of the
// same script: they are replaced by a placeholder before comparing.
func volatile(key string) bool {
	switch key {
	case "uid", "creationTimestamp", "deletionTimestamp", "resourceVersion", "time",
		"buildDate", "goVersion", "gitCommit", "continue":
		return true
	}
	return false
}

var digitsRE = regexp.MustCompile(`[0-9]+`)

// normalise turns a body into comparable lines: a JSON document indented,
// with its volatile values and the numbers inside messages replaced; a
// watch stream (one JSON event a line) event by event; anything else as
// its lines.
func normalise(body []byte) []string {
	var whole any
	if json.Unmarshal(body, &whole) == nil {
		return indented(whole)
	}
	var out []string
	for _, line := range bytes.Split(bytes.TrimRight(body, "\n"), []byte("\n")) {
		var v any
		if json.Unmarshal(line, &v) != nil {
			out = append(out, string(line))
			continue
		}
		out = append(out, indented(v)...)
	}
	return out
}

func indented(v any) []string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "<volatile>" readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(scrub(v, "")); err != nil {
		return []string{err.Error()}
	}
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

func scrub(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = scrub(val, k)
		}
		return x
	case []any:
		for i := range x {
			x[i] = scrub(x[i], key)
		}
		return x
	case string:
		if volatile(key) {
			return "<volatile>"
		}
		if key == "message" {
			return digitsRE.ReplaceAllString(x, "N")
		}
		return x
	}
	return v
}

// lineDiff is the lines only in a ("- ") or only in b ("+ "), in order,
// from a longest common subsequence of the two.
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+strings.TrimSpace(b[j]))
			j++
		default:
			out = append(out, "- "+strings.TrimSpace(a[i]))
			i++
		}
	}
	return out
}

// sortedKeys is a map's keys in order, for stable output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
