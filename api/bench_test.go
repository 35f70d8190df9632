package api

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Benchmarks for the hot path of every watch: one ConfigMap event, as
// recorded from a real server (493 bytes, managedFields included), decoded
// by a client and encoded by the server. Results and the command are in
// docs/performance-api.md.

func benchEvent(b *testing.B) []byte {
	b.Helper()
	body := readFixture(b, "watch-from-list-rv.jsonl")
	line, _, _ := bytes.Cut(body, []byte("\n"))
	return line
}

func BenchmarkEventDecode(b *testing.B) {
	line := benchEvent(b)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		var e Event
		if err := e.UnmarshalJSON(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventDecodeGenericMap is the yardstick: encoding/json into a
// map[string]any, which is roughly what an unstructured decoder does.
func BenchmarkEventDecodeGenericMap(b *testing.B) {
	line := benchEvent(b)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventEncode appends into a reused buffer, as a server writing a
// stream of events does.
func BenchmarkEventEncode(b *testing.B) {
	line := benchEvent(b)
	var e Event
	if err := e.UnmarshalJSON(line); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	buf := make([]byte, 0, 1024)
	for b.Loop() {
		buf = e.AppendJSON(buf[:0])
	}
	if !bytes.Equal(buf, line) {
		b.Fatalf("encoded %q", buf)
	}
}

// BenchmarkEventMarshal is the same through json.Marshal, which validates
// and copies the result.
func BenchmarkEventMarshal(b *testing.B) {
	line := benchEvent(b)
	var e Event
	if err := e.UnmarshalJSON(line); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(&e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObjectDeepCopy(b *testing.B) {
	var e Event
	if err := e.UnmarshalJSON(benchEvent(b)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = e.Object.DeepCopy()
	}
}

func BenchmarkLabelSelectorParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseLabelSelector("app=demo,tier in (web,api),!canary"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLabelSelectorMatches is the per-event cost of a selector in the
// watch cache.
func BenchmarkLabelSelectorMatches(b *testing.B) {
	sel, err := ParseLabelSelector("app=demo,tier in (web,api),!canary")
	if err != nil {
		b.Fatal(err)
	}
	labels := map[string]string{"app": "demo", "tier": "web", "release": "1"}
	b.ReportAllocs()
	for b.Loop() {
		if !sel.Matches(labels) {
			b.Fatal("no match")
		}
	}
}
