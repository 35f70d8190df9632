package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// writeTable writes <dir>/table.md from the specs list and each server's
// results, and returns it: the counts, then one row per spec (reference,
// ours), then why ours failed where the reference passed.
func writeTable(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "specs.json"))
	if err != nil {
		return "", fmt.Errorf("specs list: %w", err)
	}
	var specs []spec
	if err := json.Unmarshal(data, &specs); err != nil {
		return "", fmt.Errorf("specs list: %w", err)
	}
	ref, err := resultsBySpec(filepath.Join(dir, "reference", "results.json"))
	if err != nil {
		return "", err
	}
	our, err := resultsBySpec(filepath.Join(dir, "ours", "results.json"))
	if err != nil {
		return "", err
	}
	text := renderTable(specs, ref, our)
	if err := os.WriteFile(filepath.Join(dir, "table.md"), []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("table: %w", err)
	}
	return text, nil
}

// resultsBySpec reads a server's results, keyed by spec text; a server
// never run has none.
func resultsBySpec(path string) (map[string]result, error) {
	results, err := readResults(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]result{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := make(map[string]result, len(results))
	for _, r := range results {
		m[r.Spec] = r
	}
	return m, nil
}

// renderTable is the Markdown of the counts, the table and the notes,
// rows sorted by group and spec (the suite's own order is random).
func renderTable(specs []spec, ref, our map[string]result) string {
	specs = slices.Clone(specs)
	slices.SortStableFunc(specs, func(a, b spec) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Text, b.Text))
	})
	var b, rows, notes strings.Builder
	refPass, ourPass, ourExtra := 0, 0, 0
	for _, s := range specs {
		r, o := ref[s.Text], our[s.Text]
		refOK, ourOK := r.State == "passed", o.State == "passed"
		switch {
		case refOK && ourOK:
			refPass++
			ourPass++
		case refOK:
			refPass++
			fmt.Fprintf(&notes, "- %s: %s\n", shortName(s), orNone(o.Message))
		case ourOK:
			ourExtra++
		}
		fmt.Fprintf(&rows, "| %s | %s | %s | %s |\n", s.Group, escapeCell(shortName(s)), cell(r, false), cell(o, refOK && !ourOK))
	}
	fmt.Fprintf(&b, "%d in-scope specs. The reference passes %d; ours passes %d of those %d", len(specs), refPass, ourPass, refPass)
	if ourExtra > 0 {
		fmt.Fprintf(&b, ", and %d the reference fails", ourExtra)
	}
	b.WriteString(".\n\n| group | spec | reference | ours |\n|---|---|---|---|\n")
	b.WriteString(rows.String())
	if notes.Len() > 0 {
		b.WriteString("\nWhere the reference passes and ours does not, ours' failure:\n\n")
		b.WriteString(notes.String())
	}
	return b.String()
}

// shortName is a spec's text without "[sig-api-machinery] " and its group,
// which the table's first column shows.
func shortName(s spec) string {
	rest := strings.TrimPrefix(s.Text, sigPrefix)
	return strings.TrimSpace(strings.TrimPrefix(rest, s.Group))
}

// cell shows a state; a failure the reference does not share is bold.
func cell(r result, bold bool) string {
	state := r.State
	switch state {
	case "":
		state = "not run"
	case "passed":
		state = "pass"
	}
	if bold {
		return "**" + state + "**"
	}
	return state
}

func orNone(msg string) string {
	if msg == "" {
		return "(no message)"
	}
	return escapeCell(msg)
}

// escapeCell keeps a text from breaking a Markdown table row.
func escapeCell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
