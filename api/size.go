package api

// SizeOverhead is what Size adds for an object's fixed parts (its struct,
// slice and map headers, the field names of its metadata), so that a flood
// of tiny objects still counts against a memory budget.
const SizeOverhead = 256

// Size estimates the bytes an object holds in memory: its raw field
// values, names, labels, annotations and extra metadata, plus SizeOverhead.
// It is close to the length of its JSON without encoding anything, so the
// store and the watch cache can charge every event against a budget in
// bytes as cheaply as they count it.
func (o *Object) Size() int64 {
	if o == nil {
		return 0
	}
	m := &o.Metadata
	n := SizeOverhead + len(o.APIVersion) + len(o.Kind) + len(m.Name) + len(m.GenerateName) +
		len(m.Namespace) + len(m.UID) + len(m.ResourceVersion)
	n += fieldsSize(o.Fields) + fieldsSize(m.Extra)
	for k, v := range m.Labels {
		n += len(k) + len(v)
	}
	for k, v := range m.Annotations {
		n += len(k) + len(v)
	}
	return int64(n)
}

func fieldsSize(fs []Field) int {
	n := 0
	for _, f := range fs {
		n += len(f.Name) + len(f.Value)
	}
	return n
}
