package doccheck_test

import (
	"fmt"

	"listwatch/docs/doccheck"
)

// A page's shell blocks are either run or illustrative; its links and go
// run targets are checked against the repository.
func Example() {
	page := "See [the tour](../cmd/tour/), the examples (go run ./examples/...) and [Kubernetes](https://kubernetes.io).\n" +
		"```sh\ngo run ./cmd/tour -no-color\ngo test ./fifo \\\n  -run Regression\n```\n" +
		"```console\n$ curl -N http://127.0.0.1:8080/api/v1/configmaps?watch=true\n```\n"
	for _, b := range doccheck.Blocks(page) {
		fmt.Printf("%s block at line %d, illustrative %v: %q\n", b.Info, b.Line, b.Illustrative(), b.Commands())
	}
	for _, l := range doccheck.Links(page) {
		fmt.Printf("link %s relative %v\n", l.Target, l.Relative())
	}
	fmt.Println(doccheck.GoRunTargets(page))
	// Output:
	// sh block at line 2, illustrative false: ["go run ./cmd/tour -no-color" "go test ./fifo -run Regression"]
	// console block at line 7, illustrative true: ["$ curl -N http://127.0.0.1:8080/api/v1/configmaps?watch=true"]
	// link ../cmd/tour/ relative true
	// link https://kubernetes.io relative false
	// [./cmd/tour]
}

// A benchmark command from a page is run once per benchmark, to prove it
// still works.
func ExampleQuickBench() {
	fmt.Println(doccheck.QuickBench("go test -run XXX -bench Memory   -benchtime 100000x -count 2 ./informer/"))
	fmt.Println(doccheck.QuickBench("go test -run x -bench . -benchmem -count=6 ./store/"))
	fmt.Println(doccheck.QuickBench("go test -count=1 -run Regression ./fifo"))
	// Output:
	// go test -benchtime=1x -count=1 -run XXX -bench Memory ./informer/
	// go test -benchtime=1x -count=1 -run x -bench . -benchmem ./store/
	// go test -count=1 -run Regression ./fifo
}
