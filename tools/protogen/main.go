// Command protogen regenerates the protobuf schema listwatch's core module
// embeds (api/protobuf): the official generated.proto files of
// k8s.io/api, k8s.io/apimachinery and k8s.io/apiextensions-apiserver (the
// CustomResourceDefinition types), compiled by a pure-Go compiler
// (github.com/bufbuild/protocompile, so no protoc is needed) into a
// FileDescriptorSet, and a table of how each field appears in Kubernetes'
// JSON, read from the Go types by reflection. Both depend only on the
// versions pinned in this module's go.mod, so the output is reproducible;
// TestGeneratedFilesAreCurrent regenerates them and compares byte for
// byte.
//
//	cd tools/protogen && go run .
//
// This is a nested module so that the core module never depends on
// k8s.io/api, the compiler or their dependencies.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// outDir is where the core module's api/protobuf package lives, relative
// to this module.
const outDir = "../../api/protobuf"

// The generated files, named in api/protobuf's embed directives.
const (
	descriptorFile = "descriptors.binpb"
	fieldsFile     = "fields.txt"
)

func main() {
	out := flag.String("out", outDir, "directory to write "+descriptorFile+" and "+fieldsFile+" into")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "protogen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	files, err := generateAll()
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generateAll returns the generated files by name.
func generateAll() (map[string][]byte, error) {
	desc, err := descriptorSet()
	if err != nil {
		return nil, fmt.Errorf("compiling protos: %w", err)
	}
	fields, err := fieldTable(desc)
	if err != nil {
		return nil, fmt.Errorf("field table: %w", err)
	}
	return map[string][]byte{descriptorFile: desc, fieldsFile: fields}, nil
}
