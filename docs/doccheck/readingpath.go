package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
)

// A Stop is one file of the reading path (docs/reading-path.md): the file,
// and the names the page says to read in it and to skip on a first read.
type Stop struct {
	// Line is the 1-based line of the link that names the file.
	Line int
	// File is the file's path from the repository's root, slash separated.
	File string
	// Read and Skip are the names in backticks of the stop's "- Read:" and
	// "- Skip on a first read:" items: a function, type, constant or
	// variable by its name, a method as Type.Method.
	Read, Skip []string
}

var (
	// stopRE is a line that is only a link to a Go file: a stop.
	stopRE = regexp.MustCompile("^\\[`[^`]+`\\]\\((?:\\.\\./)+([A-Za-z0-9_./-]+\\.go)\\)$")
	codeRE = regexp.MustCompile("`([^`]+)`")
	// goFileRE is a file name in a package comment: a word ending in .go
	// that is not part of a longer path.
	goFileRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])([A-Za-z0-9_]+\.go)\b`)
)

// ReadingPath returns the stops of the reading path page, in the page's
// order. A stop starts at a line that is only a link to a Go file; the
// "- Read:" and "- Skip on a first read:" items after it, continuation
// lines included, name what to read and what to skip in that file. Names
// in backticks outside those items are prose and are not checked.
func ReadingPath(md string) []Stop {
	var stops []Stop
	var item *[]string // the list the current bullet item adds to
	for i, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if m := stopRE.FindStringSubmatch(t); m != nil {
			stops = append(stops, Stop{Line: i + 1, File: m[1]})
			item = nil
			continue
		}
		if len(stops) == 0 {
			continue
		}
		cur := &stops[len(stops)-1]
		switch {
		case strings.HasPrefix(t, "- Read:"):
			item = &cur.Read
		case strings.HasPrefix(t, "- Skip on a first read:"):
			item = &cur.Skip
		case t == "" || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "#") || !strings.HasPrefix(line, "  "):
			item = nil
		}
		if item == nil {
			continue
		}
		// Only the names outside parentheses: "(decoding and ...)" explains.
		for _, m := range codeRE.FindAllStringSubmatch(stripParens(t), -1) {
			*item = append(*item, m[1])
		}
	}
	return stops
}

// stripParens drops parenthesised asides, which explain a name rather than
// name one.
func stripParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// GoNames returns the names a Go source file declares at its top level:
// functions, types, constants and variables by name, methods as
// Type.Method (pointer or not).
func GoNames(src []byte) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = receiverType(d.Recv.List[0].Type) + "." + name
			}
			names[name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	return names, nil
}

// receiverType is the name of a method's receiver type, without a pointer
// or type parameters.
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// ReadOrder returns the files a package comment's reading-order section
// names in its list items, in order, and whether it has such a section.
// The section starts at the line that says "in this order" ("# Read in
// this order", or "Read it in this order, ...") and runs to the next
// heading or the end of the comment; only its list items ("  - file.go:
// what it holds") are read, so prose after the list may name Kubernetes'
// files freely. Paths (k8s.io/.../reflector.go) are left out too.
func ReadOrder(doc string) (files []string, ok bool) {
	in, item := false, false
	for _, line := range strings.Split(doc, "\n") {
		if strings.Contains(line, "in this order") {
			in, ok = true, true
			continue
		}
		if in && strings.HasPrefix(line, "# ") {
			break
		}
		if !in {
			continue
		}
		switch {
		case strings.HasPrefix(line, "  - "):
			item = true
		case strings.HasPrefix(line, "    "):
		default:
			item = false
		}
		if !item {
			continue
		}
		for _, m := range goFileRE.FindAllStringSubmatch(line, -1) {
			files = append(files, m[1])
		}
	}
	return files, ok
}

// PackageDoc returns the package comment of a doc.go file.
func PackageDoc(src []byte) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	if f.Doc == nil {
		return "", nil
	}
	return f.Doc.Text(), nil
}
