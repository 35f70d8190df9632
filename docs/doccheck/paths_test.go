package doccheck

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outOfTreeAllowed lists the files that may hold a path leaving the
// repository, and why: each is test input, not a reference.
var outOfTreeAllowed = map[string]string{
	"apiserver/errors_test.go":      "a name \"../../etc\" the server must refuse",
	"docs/doccheck/example_test.go": "a sample page whose links are relative to docs/",
	"docs/doccheck/paths_test.go":   "the check's own test inputs",
}

// trackedFiles lists the repository's files, root-relative and slash
// separated: git's list when this is a clone, else every file under the
// root (an exported tarball), leaving out .git.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = rootDir
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(rootDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(rootDir, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// inRepository reports whether a root-relative path is one of files or a
// directory holding one, or at least exists (made by a build, say).
func inRepository(files []string) func(string) bool {
	present := map[string]bool{".": true}
	for _, f := range files {
		for p := f; p != "."; p = path.Dir(p) {
			present[p] = true
		}
	}
	return func(p string) bool {
		if present[p] {
			return true
		}
		_, err := os.Stat(filepath.Join(rootDir, filepath.FromSlash(p)))
		return err == nil
	}
}

// No file of the repository points outside it: a fresh clone with nothing
// beside it must be complete. Every tracked text file is scanned for
// absolute paths into a home or work directory and for ../ paths that
// leave the repository or name nothing in it (see OutOfTree).
func TestNothingPointsOutsideTheRepository(t *testing.T) {
	files := trackedFiles(t)
	require.NotEmpty(t, files)
	exists := inRepository(files)
	for _, f := range files {
		if _, ok := outOfTreeAllowed[f]; ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(rootDir, filepath.FromSlash(f)))
		if err != nil || bytes.IndexByte(b, 0) >= 0 {
			continue // deleted in the worktree, or binary
		}
		for _, r := range OutOfTree(f, string(b), exists) {
			t.Errorf("%s:%d: %q %s; point inside the repository (fixtures: testdata/fixtures, articles: docs/articles.md)", f, r.Line, r.Path, r.Why)
		}
	}
}

// The allow-list names only files that exist and still need it.
func TestOutOfTreeAllowListIsCurrent(t *testing.T) {
	exists := inRepository(trackedFiles(t))
	for f := range outOfTreeAllowed {
		b, err := os.ReadFile(filepath.Join(rootDir, filepath.FromSlash(f)))
		require.NoError(t, err, "allow-listed file %s is gone", f)
		assert.NotEmpty(t, OutOfTree(f, string(b), exists), "%s no longer needs its allow-list entry", f)
	}
}

func TestOutOfTree(t *testing.T) {
	repo := map[string]bool{"testdata/fixtures": true, "client/streamwatcher.go": true, "docs": true, "docs/articles.md": true}
	exists := func(p string) bool { return repo[p] }
	// The bad paths are assembled, so that this file does not itself hold
	// one for git grep (or the check above) to find.
	up, shared, work, root := "../", "shared/", "/"+"work/", "/"+"root/"
	tests := []struct {
		file, text string
		want       []string // the paths reported
	}{
		{"api/doc.go", "// originals in " + up + shared + "fixtures), because", []string{up + shared + "fixtures"}},
		{"interop/doc.go", "// the recordings in " + up + up + shared + "fixtures decoded", []string{up + up + shared + "fixtures"}},
		{"client/doc.go", "// read " + work + shared + "seeds/000_x.txt and " + root + "go/pkg",
			[]string{work + shared + "seeds/000_x.txt", root + "go/pkg"}},
		{"examples/01-curl-watch/README.md", "[code](../../client/streamwatcher.go).", nil},
		{"examples/README.md", "[code](../../client/streamwatcher.go).", []string{"../../client/streamwatcher.go"}},
		{"examples/README.md", "see [articles](../docs/articles.md).", nil},
		{"docs/chaos.md", "the seeds (`../testdata/fixtures/*.jsonl`)", nil},
		{"docs/chaos.md", "the seeds (`../testdata/nothing/*.jsonl`)", []string{"../testdata/nothing/*.jsonl"}},
		{"docs/doccheck/x_test.go", `const rootDir = "../.."`, nil},
		{"apiserver/x_test.go", `"start":"/../../secrets/x"`, nil},
		{"apiserver/x_test.go", `https://example.com/a/../b`, nil},
		{"testdata/fixtures/pod.json", `"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"`, nil},
		{"README.md", "go run ./cmd/tour", nil},
	}
	for _, tc := range tests {
		var got []string
		for _, r := range OutOfTree(tc.file, tc.text, exists) {
			got = append(got, r.Path)
		}
		assert.Equal(t, tc.want, got, "%s: %q", tc.file, tc.text)
	}
}
