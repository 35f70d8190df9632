package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// keep copies one recording the script cannot make (a capture of another
// client, a race the server rarely loses) from the previous recordings,
// with its README entry, marked as kept and why.
func keep(previousDir, outDir string, s step) (string, error) {
	names := []string{s.File}
	if dump, ok := strings.CutSuffix(s.File, ".pb"); ok {
		names = append(names, dump+".txt")
	}
	for i, name := range names {
		data, err := os.ReadFile(filepath.Join(previousDir, name))
		if i > 0 && errors.Is(err, os.ErrNotExist) {
			continue // a .pb kept without a hex dump beside it
		}
		if err != nil {
			return "", fmt.Errorf("keep %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(outDir, name), data, 0o644); err != nil {
			return "", fmt.Errorf("keep %s: %w", name, err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(previousDir, "README.md"))
	if err != nil {
		return "", fmt.Errorf("keep %s: %w", s.File, err)
	}
	entry, ok := readmeEntry(string(readme), s.File)
	if !ok {
		return "", fmt.Errorf("keep %s: no entry in %s/README.md", s.File, previousDir)
	}
	head, rest, _ := strings.Cut(entry, "\n\n")
	// An entry kept before already says so: say it once.
	var lines []string
	for _, l := range strings.SplitAfter(rest, "\n") {
		if !strings.HasPrefix(l, keptPrefix) {
			lines = append(lines, l)
		}
	}
	rest = strings.Join(lines, "")

	return head + "\n\n" + keptPrefix + s.Demonstrates + "\n" + rest, nil
}

const keptPrefix = "* Kept from the previous recordings, not recorded again: "

// readmeEntry is the "### `name`" entry of a fixtures README, up to the
// next entry or section.
func readmeEntry(readme, name string) (string, bool) {
	start := strings.Index(readme, "\n### `"+name+"`")
	if start < 0 {
		return "", false
	}
	entry := readme[start+1:]
	end := len(entry)
	for _, next := range []string{"\n### ", "\n## "} {
		if i := strings.Index(entry[1:], next); i >= 0 && i+1 < end {
			end = i + 1
		}
	}
	return strings.TrimRight(entry[:end], "\n") + "\n\n", true
}
