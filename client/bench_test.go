package client

import (
	"bytes"
	"io"
	"testing"

	"listwatch/api"
)

// benchStream is n copies of a realistic ~500-byte event.
func benchStream(b *testing.B, n int) ([]byte, int) {
	b.Helper()
	ev := cm(api.Modified, "demo", "12345")
	ev.Object.Metadata.Labels = map[string]string{"app": "demo", "tier": "web"}
	ev.Object.Metadata.UID = "626927f9-4c6c-42ea-a260-146131a69b0c"
	ev.Object.Fields = []api.Field{{Name: "data", Value: bytes.Repeat([]byte(`{"k":"v"}`), 1)}}
	ev.Object.Metadata.Extra = []api.Field{{Name: "managedFields", Value: []byte(`[{"manager":"fixture-recorder","operation":"Update","apiVersion":"v1","time":"2026-11-21T16:17:28Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:extra":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}}}}]`)}}
	line := eventLine(b, ev)
	return bytes.Repeat(line, n), len(line)
}

// BenchmarkEventDecoder measures framing plus decoding, per event.
func BenchmarkEventDecoder(b *testing.B) {
	const perRun = 1000
	data, size := benchStream(b, perRun)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += perRun {
		dec := NewEventDecoder(bytes.NewReader(data), 0)
		for j := 0; j < perRun; j++ {
			if _, err := dec.Decode(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkStreamWatcher measures an event's trip from the body to the
// consumer, including the unbuffered hand-over between goroutines.
func BenchmarkStreamWatcher(b *testing.B) {
	data, size := benchStream(b, 1000)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	pr, pw := io.Pipe()
	go func() {
		for written := 0; written < b.N; written += 1000 {
			if _, err := pw.Write(data); err != nil {
				return
			}
		}
		_ = pw.Close()
	}()
	w := NewStreamWatcher(pr, nil)
	defer w.Stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := <-w.ResultChan(); !ok {
			b.Fatal("closed early")
		}
	}
}
