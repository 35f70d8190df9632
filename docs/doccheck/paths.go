package doccheck

import (
	"path"
	"regexp"
	"strings"
)

// A Reference is a path written in a file that leaves the repository, or
// that names something the repository does not hold.
type Reference struct {
	Line int
	Path string
	Why  string
}

var (
	// absoluteRE finds absolute paths into a home or work directory: a
	// machine's layout, never the reader's. System paths (/dev/null,
	// /var/run/secrets in recorded Pods) are not the repository's to hold
	// and are fine.
	absoluteRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.~/-])((?:/work|/root|/home|/Users|/mnt/c)/[A-Za-z0-9_.@/-]*)`)
	// relativeRE finds a path that starts by going up one directory or
	// more. A slash before it makes it part of a longer path (an URL, a
	// traversal attempt inside a test string), which is not a reference.
	relativeRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:\.\./)+[A-Za-z0-9_.*@-]*(?:/[A-Za-z0-9_.*@-]+)*)`)
)

// OutOfTree returns the paths in text, the contents of file (slash
// separated, relative to the repository's root), that point outside the
// repository: an absolute path into a home or work directory, or a ../
// path that, resolved against file's directory, leaves the root or names
// nothing that exists. exists reports whether a root-relative path is a
// file or directory of the repository.
//
// It is what keeps a fresh clone self-contained: a comment that sends the
// reader to a folder beside the clone names a folder only its author had.
func OutOfTree(file, text string, exists func(string) bool) []Reference {
	var refs []Reference
	dir := path.Dir(file)
	for i, line := range strings.Split(text, "\n") {
		for _, m := range absoluteRE.FindAllStringSubmatch(line, -1) {
			refs = append(refs, Reference{Line: i + 1, Path: m[1], Why: "absolute path on one machine"})
		}
		for _, m := range relativeRE.FindAllStringSubmatch(line, -1) {
			if strings.Trim(m[1], "./") == "" {
				continue // "../.." alone: a directory walk in code, not a reference
			}
			p := strings.TrimRight(m[1], ".") // a full stop ending a sentence
			resolved := path.Join(dir, p)
			switch {
			case resolved == ".." || strings.HasPrefix(resolved, "../"):
				refs = append(refs, Reference{Line: i + 1, Path: m[1], Why: "leaves the repository"})
			case strings.ContainsAny(resolved, "*"):
				// A glob: its directory must exist.
				if d := path.Dir(resolved[:strings.Index(resolved, "*")] + "x"); !exists(d) {
					refs = append(refs, Reference{Line: i + 1, Path: m[1], Why: "names nothing in the repository"})
				}
			case !exists(resolved):
				refs = append(refs, Reference{Line: i + 1, Path: m[1], Why: "names nothing in the repository"})
			}
		}
	}
	return refs
}
