// Package examples holds the tutorial's runnable examples, one directory
// per question the source articles raise (see README.md): each is a main
// package, run with `go run ./examples/01-curl-watch`, that starts our
// apiserver in-process and shows one behaviour happening.
//
// This package itself is empty. Its test, examples_test.go, keeps the
// examples honest: it builds every example, runs each shell command its
// README shows, and checks the lines the README says to look for.
package examples
