// Package doccheck keeps the tutorial in docs/ true: its test reads every
// Markdown page in docs/ and fails when a page promises something the
// repository no longer delivers.
//
// The rules, checked by doccheck_test.go on every `go test ./...` (and so
// by ./test.sh):
//
//   - Every relative link points to a file or directory that exists.
//   - Every `go run ./path` anywhere in a page names a directory holding a
//     main package.
//   - Every fenced shell block is either run or marked illustrative:
//   - ```console blocks are illustrative: a terminal session with
//     prompts and output, shown, never run (a curl against a server
//     you start in another terminal, kubectl against a real cluster);
//   - ```sh blocks marked on the fence (```sh illustrative) or whose
//     first line is "# illustrative" (perhaps followed by ": reason")
//     are likewise shown, never run;
//   - every other ```sh block is run, line by line, with bash from the
//     repository's root, each line within a time limit, and must exit
//     0 — except `go run ./cmd/tour` and `go run ./examples/...` lines,
//     which other tests already run (cmd/tour's test runs the tour;
//     the examples' test runs every example with a time limit and
//     checks what its README says to look for), so here they are only
//     checked to exist; and a `go test -bench` line is run with
//     -benchtime=1x -count=1, which proves that the command and its
//     benchmarks still work without re-measuring anything;
//   - a `go test` line (not a benchmark or fuzz run) must have -v: a plain
//     `go test` prints only "ok", which teaches the reader nothing;
//   - ```bash, ```shell and ```zsh are refused: say sh or console.
//   - Every numbered chapter (NN-name.md) names the Kubernetes file it
//     mirrors (a k8s.io/ path), links a package of this repository and an
//     example, and ends with "You can now explain".
//   - No forward references: a chapter may use a term before the chapter
//     that explains it only if the glossary defines it. By convention a
//     term is set in **bold** where a chapter first relies on it, and every
//     bold term in a chapter must have an entry (a line starting with the
//     bold term) in glossary.md. Pointing ahead ("chapter 06 shows what
//     the Reflector does about it") is allowed; relying on an unexplained
//     word is not.
//   - docs/README.md links every page in docs/.
//   - The reading path (reading-path.md) names files and functions that
//     exist: every line that is only a link to a Go file is a stop, each
//     file is a stop once, and every name in backticks in a stop's
//     "- Read:" and "- Skip on a first read:" items is declared in that
//     file (a method as Type.Method). Every core package's doc.go has a
//     "Read in this order" section whose list names only files it holds.
//
// The package itself is the small Markdown scanner those checks use:
// fenced blocks (Blocks), links (Links), go run targets (GoRunTargets),
// the reading path's stops (ReadingPath) and what a Go file declares
// (GoNames) or its package comment says to read (ReadOrder).
// It is not a Markdown parser; it understands the subset these pages use.
package doccheck
