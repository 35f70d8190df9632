package interop_test

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"listwatch/api/protobuf"
)

// generatedMessage is what Kubernetes' generated code gives every kind
// (k8s.io/api's generated.pb.go): Marshal and Unmarshal of its protobuf
// message.
type generatedMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// BenchmarkProtobufPerObject compares our transcoder with the code
// Kubernetes generates for each kind, per object, on the recorded GET
// answers of a real kube-apiserver (a ConfigMap and a Deployment, with
// managedFields). The two do not start from the same place: kube-apiserver
// holds typed Go structs and marshals them (Marshal) or unmarshals a
// request body into one (Unmarshal); ours holds JSON and transcodes it
// (ours/Marshal: JSON to protobuf, ours/Unmarshal: protobuf to JSON). The
// like-for-like transcoding is "generated/FromJSON" (encoding/json into the
// struct, then Marshal) and "generated/ToJSON" (Unmarshal, then
// encoding/json). Allocations per object are the load-insensitive figure.
func BenchmarkProtobufPerObject(b *testing.B) {
	s := protobuf.Default()
	cases := []struct {
		fixture string
		newObj  func() generatedMessage
	}{
		{"protobuf-get-configmap.pb", func() generatedMessage { return &corev1.ConfigMap{} }},
		{"protobuf-get-deployment.pb", func() generatedMessage { return &appsv1.Deployment{} }},
	}
	for _, c := range cases {
		env, js, err := s.DecodeObject(readFixture(b, c.fixture), "", "")
		if err != nil {
			b.Fatal(err)
		}
		raw := env.Raw
		obj := c.newObj()
		if err := obj.Unmarshal(raw); err != nil {
			b.Fatal(err)
		}
		name := env.Kind
		run := func(what string, f func() error) {
			b.Run(name+"/"+what, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		run("ours/Marshal", func() error { _, err := s.Marshal(env.APIVersion, env.Kind, js); return err })
		run("ours/Unmarshal", func() error { _, err := s.Unmarshal(env.APIVersion, env.Kind, raw); return err })
		run("generated/Marshal", func() error { _, err := obj.Marshal(); return err })
		run("generated/Unmarshal", func() error { return c.newObj().Unmarshal(raw) })
		run("generated/FromJSON", func() error {
			o := c.newObj()
			if err := json.Unmarshal(js, o); err != nil {
				return err
			}
			_, err := o.Marshal()
			return err
		})
		run("generated/ToJSON", func() error {
			o := c.newObj()
			if err := o.Unmarshal(raw); err != nil {
				return err
			}
			_, err := json.Marshal(o)
			return err
		})
	}
}
