package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// sigPrefix starts the outermost container text of every API machinery
// spec: test/e2e/apimachinery/framework.go, SIGDescribe, wraps
// framework.SIGDescribe("api-machinery").
const sigPrefix = "[sig-api-machinery] "

// inScopeGroups are the [sig-api-machinery] groups the runner runs: the
// text of each spec's outermost Describe after sigPrefix starts with one of
// these (followed by nothing or a space). docs/e2e.md lists the groups left
// out and why.
func inScopeGroups() []string {
	return []string{
		"Watchers",
		"Servers with support for API chunking",
		"Servers with support for Table transformation",
		"API Streaming (aka. WatchList)",
		"AggregatedDiscovery",
		"Discovery",
		"CustomResourceDefinition resources",
		"CustomResourceDefinition Watch",
		"FieldValidation",
		"ServerSideApply",
		"Namespaces",
		"Garbage collector",
		"Generated clientset",
		"server version",
		"Server request timeout",
		"health handlers",
	}
}

// spec is one e2e test: its full text, which is also how ginkgo's
// --ginkgo.focus finds it, and the group it belongs to.
type spec struct {
	Text   string `json:"text"`
	Group  string `json:"group"`
	Serial bool   `json:"serial,omitempty"`
}

// groupOf is the in-scope group of a spec's outermost container text, or
// "" when the spec is out of scope.
func groupOf(container string) string {
	rest, ok := strings.CutPrefix(container, sigPrefix)
	if !ok {
		return ""
	}
	for _, g := range inScopeGroups() {
		if rest == g || strings.HasPrefix(rest, g+" ") {
			return g
		}
	}
	return ""
}

// ginkgoReport is the part of ginkgo's JSON report (--ginkgo.json-report,
// github.com/onsi/ginkgo/v2/types.Report) the runner reads. The file holds
// a list of them, one per suite.
type ginkgoReport struct {
	SpecReports []ginkgoSpecReport
}

type ginkgoSpecReport struct {
	ContainerHierarchyTexts  []string
	LeafNodeType             string
	LeafNodeText             string
	State                    string
	IsSerial                 bool
	LeafNodeLabels           []string
	ContainerHierarchyLabels [][]string
	RunTime                  time.Duration
	Failure                  struct {
		Message         string
		FailureNodeType string
	}
}

// text is the spec's full text as ginkgo's focus sees it (internal/spec.go,
// Spec.Text: the non-empty texts of its nodes joined by spaces).
func (r ginkgoSpecReport) text() string {
	var texts []string
	for _, t := range append(append([]string(nil), r.ContainerHierarchyTexts...), r.LeafNodeText) {
		if t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, " ")
}

// serial says the spec must run alone. Kubernetes marks such specs with
// framework.WithSerial, the label "Serial" (test/e2e/framework/
// ginkgowrapper.go, withSerial), which registerInSuite also turns into
// ginkgo's Serial decorator and the text " [Serial]". The report of a
// --ginkgo.dry-run carries the labels, on the spec or on a container, but
// leaves IsSerial false, so the label decides.
func (r ginkgoSpecReport) serial() bool {
	labels := append([]string(nil), r.LeafNodeLabels...)
	for _, l := range r.ContainerHierarchyLabels {
		labels = append(labels, l...)
	}
	return r.IsSerial || slices.Contains(labels, "Serial")
}

// readGinkgoReport reads the spec reports of a --ginkgo.json-report file.
func readGinkgoReport(path string) ([]ginkgoSpecReport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ginkgo report: %w", err)
	}
	var reports []ginkgoReport
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, fmt.Errorf("ginkgo report %s: %w", path, err)
	}
	var specs []ginkgoSpecReport
	for _, r := range reports {
		specs = append(specs, r.SpecReports...)
	}
	return specs, nil
}

// listSpecs asks e2e.test for its API machinery specs without running them
// (--ginkgo.dry-run) and keeps the in-scope ones, in the suite's order.
func listSpecs(ctx context.Context, e2eBin, dir string) ([]spec, error) {
	report := filepath.Join(dir, "list.json")
	cmd := exec.CommandContext(ctx, e2eBin,
		"--ginkgo.dry-run", "--ginkgo.no-color",
		"--ginkgo.focus="+regexp.QuoteMeta(sigPrefix),
		"--ginkgo.json-report="+report)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("listing the specs (%s --ginkgo.dry-run): %w\n%s", e2eBin, err, lastLines(out))
	}
	reports, err := readGinkgoReport(report)
	if err != nil {
		return nil, err
	}
	var specs []spec
	for _, r := range reports {
		if r.LeafNodeType != "It" || len(r.ContainerHierarchyTexts) == 0 {
			continue
		}
		if g := groupOf(r.ContainerHierarchyTexts[0]); g != "" {
			specs = append(specs, spec{Text: r.text(), Group: g, Serial: r.serial()})
		}
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("e2e.test lists no in-scope spec (report %s)", report)
	}
	return specs, nil
}
