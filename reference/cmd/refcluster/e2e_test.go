package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestGroupOfKeepsOnlyInScopeGroups(t *testing.T) {
	for container, want := range map[string]string{
		"[sig-api-machinery] Watchers":                                                     "Watchers",
		"[sig-api-machinery] Discovery":                                                    "Discovery",
		"[sig-api-machinery] AggregatedDiscovery":                                          "AggregatedDiscovery",
		"[sig-api-machinery] CustomResourceDefinition resources [Privileged:ClusterAdmin]": "CustomResourceDefinition resources",
		"[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin]":       "",
		"[sig-api-machinery] ResourceQuota":                                                "",
		"[sig-api-machinery] WatchersExtra":                                                "",
		"[sig-apps] Deployment":                                                            "",
	} {
		if got := groupOf(container); got != want {
			t.Errorf("groupOf(%q) = %q, want %q", container, got, want)
		}
	}
}

// The focus selects its spec and no other: ginkgo matches it against the
// suite's description, a space and the spec's text.
func TestFocusSelectsExactlyOneSpec(t *testing.T) {
	discovery := "[sig-api-machinery] Discovery should validate PreferredVersion for each APIGroup [Conformance]"
	re := regexp.MustCompile(focusOf(discovery))
	if !re.MatchString("Kubernetes e2e suite " + discovery) {
		t.Errorf("focus %q misses its spec", re)
	}
	for _, other := range []string{
		"[sig-api-machinery] AggregatedDiscovery should validate PreferredVersion for each APIGroup [Conformance]",
		discovery + " [Slow]",
	} {
		if re.MatchString("Kubernetes e2e suite " + other) {
			t.Errorf("focus %q also matches %q", re, other)
		}
	}
}

func TestStateFromReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	text := "[sig-api-machinery] Watchers should work"
	spec := `{"ContainerHierarchyTexts":["[sig-api-machinery] Watchers"],"LeafNodeType":"It","LeafNodeText":"should work","State":"%s","Failure":{"Message":"boom\nmore"}}`
	other := `{"ContainerHierarchyTexts":["[sig-api-machinery] Watchers"],"LeafNodeType":"It","LeafNodeText":"other","State":"skipped"}`
	setupFailed := `{"LeafNodeType":"SynchronizedBeforeSuite","State":"failed","Failure":{"Message":"no nodes"}}`
	for _, tt := range []struct{ name, body, state, message string }{
		{"passed", `[{"SpecReports":[` + other + `,` + strings.Replace(spec, "%s", "passed", 1) + `]}]`, "passed", "boom"},
		{"failed", `[{"SpecReports":[` + strings.Replace(spec, "%s", "failed", 1) + `]}]`, "failed", "boom"},
		{"setup", `[{"SpecReports":[` + setupFailed + `,` + strings.Replace(spec, "%s", "skipped", 1) + `]}]`, stateSetupFailed, "no nodes"},
		{"absent", `[{"SpecReports":[` + other + `]}]`, stateCrashed, "the report has no such spec"},
	} {
		state, message := stateFromReport(write(tt.name+".json", tt.body), text)
		if state != tt.state || message != tt.message {
			t.Errorf("%s: got (%q, %q), want (%q, %q)", tt.name, state, message, tt.state, tt.message)
		}
	}
	if state, _ := stateFromReport(filepath.Join(dir, "missing.json"), text); state != stateCrashed {
		t.Errorf("a missing report: state %q, want %q", state, stateCrashed)
	}
}

// A -focus run replaces its rows and keeps the others.
func TestMergeResultsKeepsOtherRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	if err := mergeResults(path, []result{{Spec: "a", State: "failed"}, {Spec: "b", State: "passed"}}); err != nil {
		t.Fatal(err)
	}
	if err := mergeResults(path, []result{{Spec: "a", State: "passed"}, {Spec: "c", State: "failed"}}); err != nil {
		t.Fatal(err)
	}
	got, err := readResults(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []result{{Spec: "a", State: "passed"}, {Spec: "b", State: "passed"}, {Spec: "c", State: "failed"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Spec != want[i].Spec || got[i].State != want[i].State {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestRenderTableCountsAndNotes(t *testing.T) {
	specs := []spec{
		{Text: "[sig-api-machinery] Watchers one", Group: "Watchers"},
		{Text: "[sig-api-machinery] Watchers two", Group: "Watchers"},
		{Text: "[sig-api-machinery] Discovery three", Group: "Discovery"},
	}
	ref := map[string]result{
		specs[0].Text: {State: "passed"}, specs[1].Text: {State: "passed"}, specs[2].Text: {State: "failed"},
	}
	our := map[string]result{
		specs[0].Text: {State: "passed"}, specs[1].Text: {State: "failed", Message: "got 404 | want 200"}, specs[2].Text: {State: "passed"},
	}
	got := renderTable(specs, ref, our)
	for _, want := range []string{
		"3 in-scope specs. The reference passes 2; ours passes 1 of those 2, and 1 the reference fails.",
		"| Watchers | one | pass | pass |",
		"| Watchers | two | pass | **failed** |",
		"| Discovery | three | failed | pass |",
		`- two: got 404 \| want 200`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	// Rows come by group, then spec.
	if d, w := strings.Index(got, "| Discovery | three"), strings.Index(got, "| Watchers | one"); d < 0 || w < 0 || d > w {
		t.Errorf("rows not sorted by group:\n%s", got)
	}
}

// A spec is [Serial] by its own label or its container's: a dry run's
// report carries the labels and leaves IsSerial false.
func TestSerialFromLabels(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    ginkgoSpecReport
		want bool
	}{
		{"leaf label", ginkgoSpecReport{LeafNodeLabels: []string{"Conformance", "Serial"}}, true},
		{"container label", ginkgoSpecReport{ContainerHierarchyLabels: [][]string{{"sig-api-machinery", "Serial"}}}, true},
		{"decorator", ginkgoSpecReport{IsSerial: true}, true},
		{"neither", ginkgoSpecReport{LeafNodeLabels: []string{"Conformance"}, ContainerHierarchyLabels: [][]string{{"sig-api-machinery"}}}, false},
	} {
		if got := tt.r.serial(); got != tt.want {
			t.Errorf("%s: serial() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
