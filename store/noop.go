package store

import (
	"bytes"
	"maps"

	"listwatch/api"
)

// sameObject reports whether a and b would be stored identically, comparing
// everything including resourceVersion (the caller aligns it first). It is
// the toy's version of the etcd3 store comparing the encoded bytes of the
// old and new object before a write: equal means the write is a no-op.
func sameObject(a, b *api.Object) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind &&
		sameMeta(&a.Metadata, &b.Metadata) && sameFields(a.Fields, b.Fields)
}

func sameMeta(a, b *api.ObjectMeta) bool {
	return a.Name == b.Name && a.GenerateName == b.GenerateName &&
		a.Namespace == b.Namespace && a.UID == b.UID &&
		a.ResourceVersion == b.ResourceVersion && a.Generation == b.Generation &&
		a.CreationTimestamp.Equal(b.CreationTimestamp) &&
		sameDeletionTimestamp(a, b) &&
		// maps.Equal treats nil and empty alike, as the wire does.
		maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		sameFields(a.Extra, b.Extra)
}

func sameDeletionTimestamp(a, b *api.ObjectMeta) bool {
	if a.DeletionTimestamp == nil || b.DeletionTimestamp == nil {
		return a.DeletionTimestamp == b.DeletionTimestamp
	}
	return a.DeletionTimestamp.Equal(*b.DeletionTimestamp)
}

// sameFields compares raw JSON byte for byte, as etcd3 compares encodings:
// differently spaced but equal JSON counts as a change.
func sameFields(a, b []api.Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}
