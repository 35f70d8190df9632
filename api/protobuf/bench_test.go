package protobuf_test

import (
	"testing"

	"listwatch/api/protobuf"
	"listwatch/internal/fixtures"
)

// The transcoder's cost per object, on the recorded GET answers: a
// 282-byte ConfigMap and a 1190-byte Deployment (managedFields included).
// The server pays Encode for every protobuf answer and watch frame and
// Decode for every protobuf request body.
func BenchmarkTranscode(b *testing.B) {
	s := protobuf.Default()
	for _, name := range []string{"protobuf-get-configmap.pb", "protobuf-get-deployment.pb"} {
		body := fixtures.Read(b, name)
		env, js, err := s.DecodeObject(body, "", "")
		if err != nil {
			b.Fatal(err)
		}
		b.Run("Decode/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, _, err := s.DecodeObject(body, "", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Encode/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(js)))
			for b.Loop() {
				if _, err := s.EncodeObject(env.APIVersion, env.Kind, js); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
