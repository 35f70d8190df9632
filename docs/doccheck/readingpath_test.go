package doccheck

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corePackages are the packages one event passes through: each says in its
// doc.go in what order to read its files.
var corePackages = []string{
	"store", "apiserver/cacher", "apiserver/watchserver", "apiserver/handlers",
	"client", "reflector", "fifo", "informer", "workqueue",
}

// The reading path names files and functions that exist, each file once,
// all of them in the core packages or the wire types (api/).
func TestReadingPath(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(docsDir, "reading-path.md"))
	require.NoError(t, err)
	stops := ReadingPath(string(b))
	require.NotEmpty(t, stops, "docs/reading-path.md: no stops (lines that are only a link to a Go file)")
	seen := map[string]int{}
	for _, s := range stops {
		at := where(page{name: "reading-path.md"}, s.Line)
		if first, ok := seen[s.File]; ok {
			t.Errorf("%s: %s is already a stop at line %d: the path opens each file once", at, s.File, first)
		}
		seen[s.File] = s.Line
		if dir := path.Dir(s.File); dir != "api" && !slices.Contains(corePackages, dir) {
			t.Errorf("%s: %s is not in a core package (%v) or api/", at, s.File, corePackages)
		}
		assert.NotEmpty(t, s.Read, "%s: %s has nothing to read (a \"- Read:\" item)", at, s.File)
		src, err := os.ReadFile(filepath.Join(rootDir, filepath.FromSlash(s.File)))
		if !assert.NoError(t, err, "%s: the file is gone", at) {
			continue
		}
		names, err := GoNames(src)
		require.NoError(t, err, s.File)
		for _, n := range append(slices.Clone(s.Read), s.Skip...) {
			assert.True(t, names[n], "%s: %s declares no %s", at, s.File, n)
		}
	}
}

// Every core package's doc.go says in what order to read its files, and
// names only files that exist.
func TestCorePackagesSayInWhatOrderToRead(t *testing.T) {
	for _, pkg := range corePackages {
		src, err := os.ReadFile(filepath.Join(rootDir, pkg, "doc.go"))
		if !assert.NoError(t, err, "%s has no doc.go", pkg) {
			continue
		}
		doc, err := PackageDoc(src)
		require.NoError(t, err, pkg)
		files, ok := ReadOrder(doc)
		if !assert.True(t, ok, "%s/doc.go has no \"Read in this order\" section", pkg) {
			continue
		}
		assert.NotEmpty(t, files, "%s/doc.go: its reading order names no file", pkg)
		for _, f := range files {
			_, err := os.Stat(filepath.Join(rootDir, pkg, f))
			assert.NoError(t, err, "%s/doc.go: its reading order names %s, which the package does not hold", pkg, f)
		}
	}
}

func TestReadingPathParsing(t *testing.T) {
	md := "# Title\n\nIntro with `Prose`.\n\n" +
		"### 1. A\n\n[`store/write.go`](../../store/write.go)\n\n- Read: `F`, `T.M`\n  and `G` (not `H`).\n- Skip on a first read: `K`.\n\nProse `P`.\n\n" +
		"[`client/decoder.go`](../../client/decoder.go)\n\n- Read: `X`.\n"
	got := ReadingPath(md)
	require.Len(t, got, 2)
	assert.Equal(t, Stop{Line: 7, File: "store/write.go", Read: []string{"F", "T.M", "G"}, Skip: []string{"K"}}, got[0])
	assert.Equal(t, Stop{Line: 15, File: "client/decoder.go", Read: []string{"X"}}, got[1])
}

func TestGoNames(t *testing.T) {
	names, err := GoNames([]byte("package p\n\ntype T struct{}\ntype G[K any] struct{}\n\nfunc F() {}\nfunc (t *T) M() {}\nfunc (g G[K]) N() {}\n\nconst C = 1\nvar V, W int\n"))
	require.NoError(t, err)
	for _, n := range []string{"T", "G", "F", "T.M", "G.N", "C", "V", "W"} {
		assert.True(t, names[n], n)
	}
	assert.False(t, names["M"])
}

func TestReadOrder(t *testing.T) {
	doc := "Package p.\n\n# Read in this order\n\n  - a.go: first;\n  - b_c.go, then k8s.io/x/reflector.go,\n    and e.go.\n\nProse naming f.go.\n\n# Other\n\n  - d.go\n"
	files, ok := ReadOrder(doc)
	assert.True(t, ok)
	assert.Equal(t, []string{"a.go", "b_c.go", "e.go"}, files)
	_, ok = ReadOrder("Package p.\n")
	assert.False(t, ok)
}
