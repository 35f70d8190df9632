package negotiation

// The core/v1 kinds we read as protobuf: ConfigMap, Secret and Namespace,
// with the field numbers of k8s.io/api/core/v1/generated.proto. Each
// decoder returns a value whose JSON is the object's JSON (see
// protobuf_decode.go).

// pbConfigMap is v1.ConfigMap.
type pbConfigMap struct {
	Kind       string       `json:"kind"`
	APIVersion string       `json:"apiVersion"`
	Metadata   pbObjectMeta `json:"metadata"`
	Immutable  *bool        `json:"immutable,omitempty"`
	Data       pbStringMap  `json:"data,omitempty"`
	BinaryData pbBytesMap   `json:"binaryData,omitempty"`
}

// decodeConfigMap reads
//
//	ObjectMeta metadata = 1; map<string,string> data = 2;
//	map<string,bytes> binaryData = 3; bool immutable = 4
func decodeConfigMap(msg []byte) (any, error) {
	cm := &pbConfigMap{Kind: "ConfigMap", APIVersion: "v1"}
	err := eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
		switch field {
		case 1:
			return true, readObjectMeta(r, wt, &cm.Metadata)
		case 2:
			return true, readStringMapEntry(r, "data", wt, &cm.Data)
		case 3:
			return true, readBytesMapEntry(r, "binaryData", wt, &cm.BinaryData)
		case 4:
			b, err := r.readBool("immutable", wt)
			cm.Immutable = &b
			return true, err
		}
		return false, nil
	})
	return cm, err
}

// readObjectMeta reads a length-delimited ObjectMeta field into m.
func readObjectMeta(r *wireReader, wt wireType, m *pbObjectMeta) error {
	msg, err := r.readBytes("metadata", wt)
	if err != nil {
		return err
	}
	return decodeObjectMeta(msg, m)
}

// pbSecret is v1.Secret.
type pbSecret struct {
	Kind       string       `json:"kind"`
	APIVersion string       `json:"apiVersion"`
	Metadata   pbObjectMeta `json:"metadata"`
	Immutable  *bool        `json:"immutable,omitempty"`
	Data       pbBytesMap   `json:"data,omitempty"`
	StringData pbStringMap  `json:"stringData,omitempty"`
	Type       string       `json:"type,omitempty"`
}

// decodeSecret reads
//
//	ObjectMeta metadata = 1; map<string,bytes> data = 2; string type = 3;
//	map<string,string> stringData = 4; bool immutable = 5
func decodeSecret(msg []byte) (any, error) {
	s := &pbSecret{Kind: "Secret", APIVersion: "v1"}
	err := eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
		var err error
		switch field {
		case 1:
			err = readObjectMeta(r, wt, &s.Metadata)
		case 2:
			err = readBytesMapEntry(r, "data", wt, &s.Data)
		case 3:
			s.Type, err = r.readString("type", wt)
		case 4:
			err = readStringMapEntry(r, "stringData", wt, &s.StringData)
		case 5:
			var b bool
			b, err = r.readBool("immutable", wt)
			s.Immutable = &b
		default:
			return false, nil
		}
		return true, err
	})
	return s, err
}

// pbNamespace is v1.Namespace. Its spec and status are structs, not
// pointers, so they are always written, if only as {}.
type pbNamespace struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Metadata   pbObjectMeta      `json:"metadata"`
	Spec       pbNamespaceSpec   `json:"spec"`
	Status     pbNamespaceStatus `json:"status"`
}

// pbNamespaceSpec is v1.NamespaceSpec.
type pbNamespaceSpec struct {
	Finalizers []string `json:"finalizers,omitempty"`
}

// pbNamespaceStatus is v1.NamespaceStatus.
type pbNamespaceStatus struct {
	Phase      string                 `json:"phase,omitempty"`
	Conditions []pbNamespaceCondition `json:"conditions,omitempty"`
}

// pbNamespaceCondition is v1.NamespaceCondition.
type pbNamespaceCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastTransitionTime pbTime `json:"lastTransitionTime"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// decodeNamespace reads
//
//	ObjectMeta metadata = 1; NamespaceSpec spec = 2 { repeated string finalizers = 1 };
//	NamespaceStatus status = 3 { string phase = 1; repeated NamespaceCondition conditions = 2 }
func decodeNamespace(msg []byte) (any, error) {
	ns := &pbNamespace{Kind: "Namespace", APIVersion: "v1"}
	err := eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
		switch field {
		case 1:
			return true, readObjectMeta(r, wt, &ns.Metadata)
		case 2:
			spec, err := r.readBytes("spec", wt)
			if err != nil {
				return true, err
			}
			return true, eachField(spec, func(r *wireReader, field int32, wt wireType) (bool, error) {
				if field != 1 {
					return false, nil
				}
				s, err := r.readString("spec.finalizers", wt)
				ns.Spec.Finalizers = append(ns.Spec.Finalizers, s)
				return true, err
			})
		case 3:
			status, err := r.readBytes("status", wt)
			if err != nil {
				return true, err
			}
			return true, decodeNamespaceStatus(status, &ns.Status)
		}
		return false, nil
	})
	return ns, err
}

func decodeNamespaceStatus(msg []byte, st *pbNamespaceStatus) error {
	return eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
		switch field {
		case 1:
			var err error
			st.Phase, err = r.readString("status.phase", wt)
			return true, err
		case 2:
			msg, err := r.readBytes("status.conditions", wt)
			if err != nil {
				return true, err
			}
			c, err := decodeNamespaceCondition(msg)
			st.Conditions = append(st.Conditions, c)
			return true, err
		}
		return false, nil
	})
}

// decodeNamespaceCondition reads
//
//	type = 1; status = 2; Time lastTransitionTime = 4; reason = 5; message = 6
func decodeNamespaceCondition(msg []byte) (pbNamespaceCondition, error) {
	var c pbNamespaceCondition
	err := eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
		var err error
		switch field {
		case 1:
			c.Type, err = r.readString("status.conditions.type", wt)
		case 2:
			c.Status, err = r.readString("status.conditions.status", wt)
		case 4:
			c.LastTransitionTime, err = readTime(r, "status.conditions.lastTransitionTime", wt)
		case 5:
			c.Reason, err = r.readString("status.conditions.reason", wt)
		case 6:
			c.Message, err = r.readString("status.conditions.message", wt)
		default:
			return false, nil
		}
		return true, err
	})
	return c, err
}
