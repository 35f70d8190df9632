//go:build e2e

package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"k8s.io/component-base/version"
	upstream "k8s.io/kubernetes/test/e2e"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"

	// The specs: every [sig-api-machinery] test.
	_ "k8s.io/kubernetes/test/e2e/apimachinery"

	// What test/e2e/e2e_test.go links besides the suites: the frozen
	// feature labels and the framework's debug, metrics and node hooks.
	_ "k8s.io/kubernetes/test/e2e/feature"
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
	_ "k8s.io/kubernetes/test/utils/ktesting/format"
)

// TestMain registers and parses the flags as test/e2e/e2e_test.go does
// (handleFlags, then framework.AfterReadingAllFlags), so the binary takes
// the upstream e2e.test's command line.
func TestMain(m *testing.M) {
	showVersion := flag.Bool("version", false, "Displays version information.")
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Get())
		os.Exit(0)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unknown additional command line arguments: %s\n", flag.Args())
		os.Exit(1)
	}
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

// TestE2E runs the specs through upstream's runner: its suite set-up
// (setupSuite in test/e2e/e2e.go) and ginkgo's RunSpecs.
func TestE2E(t *testing.T) {
	upstream.RunE2ETests(t)
}
