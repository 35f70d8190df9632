// Command openapigen regenerates the OpenAPI v3 schemas listwatch's
// apiserver serves (apiserver/discovery/openapi): for each group version
// it serves, the schemas of the served kinds and of everything they
// reference, cut out of the documents a real kube-apiserver v1.37 served
// (testdata/fixtures/openapi-v3-api-v1.json.gz and
// openapi-v3-apis-apps-v1.json). So `kubectl explain` reads the official
// descriptions, types and extensions, and nobody writes a schema by hand.
// TestGeneratedFilesAreCurrent regenerates and compares byte for byte.
//
//	cd tools/openapigen && go run .
//
// A nested module, like tools/protogen, so the generator is never part of
// the core module's build.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// Relative to this module.
const (
	fixturesDir = "../../testdata/fixtures"
	outDir      = "../../apiserver/discovery/openapi"
)

func main() {
	out := flag.String("out", outDir, "directory to write the schema files into")
	flag.Parse()
	files, err := generateAll()
	if err == nil {
		for name, b := range files {
			if err = os.WriteFile(filepath.Join(*out, name), b, 0o644); err != nil {
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}
