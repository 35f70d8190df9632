package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two servers' answers differ in uids, times, ages and generated names on
// every run; what is left is a real difference, said in words.
func TestCompareResultsSetsAsideWhatServersPickThemselves(t *testing.T) {
	ref := []result{{file: "a.json", status: "200 OK", contentType: "application/json",
		body: []byte(`{"metadata":{"uid":"1","creationTimestamp":"2026-01-01T00:00:00Z","generation":1},"cells":["x","5s"],"volume":"kube-api-access-abcde"}` + "\n")}}
	ours := []result{{file: "a.json", status: "200 OK", contentType: "application/json",
		body: []byte(`{"metadata":{"uid":"2","creationTimestamp":"2026-02-02T00:00:00Z"},"cells":["x","0s"],"volume":"kube-api-access-zzzzz"}` + "\n")}}
	diffs := compareResults(ref, ours)
	if len(diffs) != 1 {
		t.Fatalf("diffs = %v, want the missing generation alone", diffs)
	}
	want := "a.json metadata.generation: ours has nothing there, kube-apiserver 1.37 answers 1"
	if got := diffs[0].String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A watch stream is compared event by event; a status line as a whole.
func TestCompareResultsStreamsAndStatus(t *testing.T) {
	ref := []result{{file: "w.jsonl", status: "200 OK", body: []byte("{\"type\":\"ADDED\"}\n{\"type\":\"BOOKMARK\"}\n")},
		{file: "e.json", status: "400 Bad Request", body: []byte(`{"code":400}`)}}
	ours := []result{{file: "w.jsonl", status: "200 OK", body: []byte("{\"type\":\"ADDED\"}\n")},
		{file: "e.json", status: "500 Internal Server Error", body: []byte(`{"code":500}`)}}
	var got []string
	for _, d := range compareResults(ref, ours) {
		got = append(got, d.String())
	}
	want := []string{
		`w.jsonl event[1]: ours has nothing there, kube-apiserver 1.37 answers {"type":"BOOKMARK"}`,
		`e.json (status): ours answers 500 Internal Server Error, kube-apiserver 1.37 answers 400 Bad Request`,
		`e.json code: ours answers 500, kube-apiserver 1.37 answers 400`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The explanations are the rows of one table in a docs page; a
// difference is explained by the first row whose glob and path match.
func TestRulesComeFromTheDocsTable(t *testing.T) {
	page := filepath.Join(t.TempDir(), "page.md")
	text := "# x\n\n" + rulesHeading + "\n\n| recordings | path | why |\n|---|---|---|\n" +
		"| `table-*.json` | `rows\\[\\d+\\]\\.object\\.metadata\\.managedFields|metadata\\.x` | ours keeps none |\n" +
		"| `*.json` | `\\(status\\)` | a reason |\n\n## Next\n\n| `ignored.json` | `x` | not this section |\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rules, err := loadRules(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 {
		t.Fatalf("rules = %+v, want the section's two rows", rules)
	}
	if i := explain(rules, difference{file: "table-list.json", path: "rows[3].object.metadata.managedFields"}); i != 0 {
		t.Errorf("managedFields explained by row %d", i)
	}
	if i := explain(rules, difference{file: "list.json", path: "(status)"}); i != 1 {
		t.Errorf("status explained by row %d", i)
	}
	if i := explain(rules, difference{file: "list.json", path: "items"}); i != -1 {
		t.Errorf("items explained by row %d", i)
	}
}

// kube-apiserver sends the bookmark before a watch's deadline once or
// twice; a repeat is set aside, a bookmark at a new resourceVersion is not.
func TestRepeatedBookmarksAreOneEvent(t *testing.T) {
	bm := func(rv string) string {
		return `{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"` + rv + `"}}}` + "\n"
	}
	ref := []result{{file: "w.jsonl", status: "200 OK", body: []byte(`{"type":"ADDED"}` + "\n" + bm("5") + bm("5"))}}
	ours := []result{{file: "w.jsonl", status: "200 OK", body: []byte(`{"type":"ADDED"}` + "\n" + bm("9"))}}
	if diffs := compareResults(ref, ours); len(diffs) != 0 {
		t.Errorf("diffs = %v, want none", diffs)
	}
	ours[0].body = []byte(`{"type":"ADDED"}` + "\n")
	if diffs := compareResults(ref, ours); len(diffs) != 1 {
		t.Errorf("diffs = %v, want the missing bookmark", diffs)
	}
}

// Lists of different lengths are compared by what names their elements,
// so a kind one server lacks is one difference and the others are still
// compared member by member; a row "where ours has nothing" explains
// only what ours lacks.
func TestKeyedListsAndRowsForWhatOursLacks(t *testing.T) {
	ref := []result{{file: "d.json", status: "200 OK", body: []byte(
		`{"resources":[{"name":"bindings","verbs":["create"]},{"name":"pods","verbs":["get"],"storageVersionHash":"x"}]}`)}}
	ours := []result{{file: "d.json", status: "200 OK", body: []byte(`{"resources":[{"name":"pods","verbs":["list"]}]}`)}}
	var got []string
	for _, d := range compareResults(ref, ours) {
		got = append(got, d.path)
	}
	want := []string{"resources[name=bindings]", "resources[name=pods].storageVersionHash", "resources[name=pods].verbs[0]"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("paths %v, want %v", got, want)
	}
	page := filepath.Join(t.TempDir(), "page.md")
	text := "# x\n\n" + rulesHeading + "\n\n| recordings | path | why |\n|---|---|---|\n" +
		"| `d.json` | `resources\\[name=[^\\]]+\\](\\..*)?` where ours has nothing | not served |\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rules, err := loadRules(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range compareResults(ref, ours) {
		if i := explain(rules, d); (i == 0) != (d.ours == "") {
			t.Errorf("%s explained by row %d", d, i)
		}
	}
}
