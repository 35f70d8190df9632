package registry

import (
	"encoding/json"
	"fmt"
	"time"

	"listwatch/api"
)

// kubectl get asks for a Table (Accept: application/json;as=Table;v=v1;
// g=meta.k8s.io) so that the server, which knows each kind, picks the
// columns. This file turns objects into meta.k8s.io/v1 Tables shaped like
// table-list.json and table-get-kubectl.json; in Kubernetes that is each
// resource's TableConvertor (pkg/printers/internalversion).

// tableColumn is one column definition of a Table.
type tableColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
}

// Column is a Table column and how to fill its cell for an object.
type Column struct {
	def  tableColumn
	cell func(obj *api.Object) any
}

// The descriptions of Name and Age are Kubernetes' own (see the fixtures).
var (
	nameColumnDef = tableColumn{Name: "Name", Type: "string", Format: "name",
		Description: "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"}
	ageColumnDef = tableColumn{Name: "Age", Type: "string",
		Description: "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}

	configMapDataColumn = Column{
		def: tableColumn{Name: "Data", Type: "string",
			Description: "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."},
		cell: func(o *api.Object) any { return countKeys(o, "data") + countKeys(o, "binaryData") },
	}
	namespaceStatusColumn = Column{
		def:  tableColumn{Name: "Status", Type: "string", Description: "The status of the namespace"},
		cell: func(o *api.Object) any { return nestedString(o, "status", "phase") },
	}
)

// countKeys counts the members of the object-valued top-level field.
func countKeys(o *api.Object, field string) int {
	var m map[string]json.RawMessage
	if raw := o.Get(field); raw != nil && json.Unmarshal(raw, &m) == nil {
		return len(m)
	}
	return 0
}

// stringField returns a top-level string field, or "".
func stringField(o *api.Object, field string) string {
	var s string
	if raw := o.Get(field); raw != nil {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// nestedString returns field.sub when both levels are objects, or "".
func nestedString(o *api.Object, field, sub string) string {
	var m map[string]json.RawMessage
	if raw := o.Get(field); raw == nil || json.Unmarshal(raw, &m) != nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(m[sub], &s)
	return s
}

// table is a meta.k8s.io Table. ColumnDefinitions is null in every watch
// event after the first, so it is not omitempty.
type table struct {
	Kind              string        `json:"kind"`
	APIVersion        string        `json:"apiVersion"`
	Metadata          api.ListMeta  `json:"metadata"`
	ColumnDefinitions []tableColumn `json:"columnDefinitions"`
	Rows              []tableRow    `json:"rows"`
}

// tableRow is one object: its cells and its PartialObjectMetadata.
type tableRow struct {
	Cells  []any           `json:"cells"`
	Object json.RawMessage `json:"object"`
}

// columnDefs returns the resource's columns: Name, its own, Age, then
// the wide ones.
func (r *Resource) columnDefs() []tableColumn {
	if r.OwnColumns != nil {
		defs := make([]tableColumn, 0, len(r.OwnColumns))
		for _, c := range r.OwnColumns {
			defs = append(defs, c.def)
		}
		return defs
	}
	defs := make([]tableColumn, 0, len(r.Columns)+len(r.WideColumns)+2)
	defs = append(defs, nameColumnDef)
	for _, c := range r.Columns {
		defs = append(defs, c.def)
	}
	if !r.NoAgeColumn {
		defs = append(defs, ageColumnDef)
	}
	for _, c := range r.WideColumns {
		defs = append(defs, c.def)
	}
	return defs
}

// tableRow builds the row of one object.
func (r *Resource) tableRow(o *api.Object, now time.Time) tableRow {
	if r.OwnColumns != nil {
		cells := make([]any, 0, len(r.OwnColumns))
		for _, c := range r.OwnColumns {
			cells = append(cells, c.cell(o))
		}
		return tableRow{Cells: cells, Object: partialObjectMetadata(o, tableGroupVersion)}
	}
	cells := make([]any, 0, len(r.Columns)+2)
	cells = append(cells, o.Metadata.Name)
	for _, c := range r.Columns {
		cells = append(cells, c.cell(o))
	}
	if !r.NoAgeColumn {
		cells = append(cells, age(o.Metadata.CreationTimestamp, now))
	}
	for _, c := range r.WideColumns {
		cells = append(cells, c.cell(o))
	}
	return tableRow{Cells: cells, Object: partialObjectMetadata(o, tableGroupVersion)}
}

// tableGroupVersion is the apiVersion of Tables and PartialObjectMetadata.
const tableGroupVersion = "meta.k8s.io/v1"

// What a Table row's object is, by ?includeObject= (k8s.io/apiserver
// pkg/endpoints/handlers/response.go, asTable): its metadata as
// PartialObjectMetadata (Metadata, the default), the whole object in the
// resource's version (Object), or null (None).
const (
	IncludeMetadata = "Metadata"
	IncludeObject   = "Object"
	IncludeNone     = "None"
)

// rowObject is a row's object as include asks, apiVersion being the
// Table's (that of a PartialObjectMetadata).
func (r *Resource) rowObject(o *api.Object, apiVersion, include string) json.RawMessage {
	switch include {
	case IncludeObject:
		c := *o
		c.Kind, c.APIVersion = r.Kind, r.APIVersion()
		return c.AppendJSON(nil)
	case IncludeNone:
		return nil
	}
	return partialObjectMetadata(o, apiVersion)
}

// partialObjectMetadata is the object of a Table row: only its metadata.
func partialObjectMetadata(o *api.Object, apiVersion string) json.RawMessage {
	b := []byte(`{"kind":"PartialObjectMetadata","apiVersion":"` + apiVersion + `","metadata":`)
	b = o.Metadata.AppendJSON(b)
	return append(b, '}')
}

// ToTable converts objects into a Table at the given list metadata, each
// row's object as include (?includeObject=) asks.
func (r *Resource) ToTable(items []*api.Object, meta api.ListMeta, apiVersion, include string, now time.Time) []byte {
	t := table{Kind: "Table", APIVersion: apiVersion, Metadata: meta,
		ColumnDefinitions: r.columnDefs(), Rows: make([]tableRow, 0, len(items))}
	for _, o := range items {
		row := r.tableRow(o, now)
		row.Object = r.rowObject(o, apiVersion, include)
		t.Rows = append(t.Rows, row)
	}
	b, err := json.Marshal(&t)
	if err != nil {
		// Cells are strings and ints and objects are valid JSON, so this
		// cannot happen; say so rather than send half a table.
		return api.NewInternalError(fmt.Errorf("encoding table: %w", err)).AppendJSON(nil)
	}
	return b
}

// age formats how long ago t was, as kubectl's AGE column does
// (apimachinery's duration.HumanDuration): "0s", "11s", "5m3s", "3h", "2d4h".
func age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return humanDuration(now.Sub(t))
}

func humanDuration(d time.Duration) string {
	switch seconds := int(d.Seconds()); {
	case seconds < -1:
		return "<invalid>"
	case seconds < 0:
		return "0s"
	case seconds < 2*60:
		return fmt.Sprintf("%ds", seconds)
	}
	minutes := int(d / time.Minute)
	if minutes < 10 {
		if s := int(d/time.Second) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", minutes, s)
		}
		return fmt.Sprintf("%dm", minutes)
	}
	if minutes < 3*60 {
		return fmt.Sprintf("%dm", minutes)
	}
	hours := int(d / time.Hour)
	switch {
	case hours < 8:
		if m := minutes % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", hours, m)
		}
		return fmt.Sprintf("%dh", hours)
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 8*24:
		if h := hours % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", hours/24, h)
		}
		return fmt.Sprintf("%dd", hours/24)
	case hours < 2*365*24:
		return fmt.Sprintf("%dd", hours/24)
	case hours < 8*365*24:
		if dy := (hours / 24) % 365; dy != 0 {
			return fmt.Sprintf("%dy%dd", hours/24/365, dy)
		}
		return fmt.Sprintf("%dy", hours/24/365)
	}
	return fmt.Sprintf("%dy", hours/24/365)
}

// TableWatchFrame returns the frame encoder of one Table watch (kubectl get
// -w): each JSON watch frame {"type":T,"object":obj}\n becomes
// {"type":T,"object":Table}\n, the Table holding obj's one row at obj's
// resourceVersion. Only the watch's first event carries the column
// definitions; every later one has "columnDefinitions":null
// (watch-table-kubectl-get-w.jsonl). ERROR events pass unchanged. A
// BOOKMARK is a Table too, of one row printed from the bookmark's object
// (no name, no age): kube-apiserver 1.37.2 transforms every event's object
// (handlers/response.go, watchEmbeddedEncoder.doEncode and asTable), and
// the row object of the initial-events-end bookmark is always its
// metadata, so that a client can find the annotation whatever
// ?includeObject= asked.
func (r *Resource) TableWatchFrame(apiVersion, include string) func(jsonFrame []byte) []byte {
	first := true
	return func(frame []byte) []byte {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if json.Unmarshal(frame, &ev) != nil || ev.Type == string(api.Error) {
			return frame
		}
		var o api.Object
		if o.UnmarshalJSON(ev.Object) != nil {
			return frame
		}
		t := table{Kind: "Table", APIVersion: apiVersion, Metadata: api.ListMeta{ResourceVersion: o.Metadata.ResourceVersion},
			Rows: []tableRow{}}
		if first {
			t.ColumnDefinitions = r.columnDefs()
			first = false
		}
		inc := include
		if ev.Type == string(api.Bookmark) && o.Metadata.Annotations[api.InitialEventsEndAnnotation] == "true" {
			inc = IncludeMetadata
		}
		row := r.tableRow(&o, time.Now())
		row.Object = r.rowObject(&o, apiVersion, inc)
		t.Rows = append(t.Rows, row)
		body, err := json.Marshal(&t)
		if err != nil {
			return frame // cells are strings and numbers: cannot happen
		}
		out := make([]byte, 0, len(body)+len(ev.Type)+32)
		out = append(out, `{"type":"`...)
		out = append(out, ev.Type...)
		out = append(out, `","object":`...)
		out = append(out, body...)
		return append(out, "}\n"...)
	}
}
