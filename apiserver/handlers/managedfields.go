package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"listwatch/api"
	"listwatch/apiserver/discovery"
	"listwatch/apiserver/patch"
	"listwatch/apiserver/registry"
)

// Field ownership outside apply: the manager a write is recorded under,
// the schema that says how a kind's lists merge, and the recording of
// updates (patch/update.go) at the end of a PUT or a patch. Kubernetes:
// handlers/create.go managerOrUserAgent, handlers/update.go and patch.go
// (fieldManager.UpdateNoErrors).

// fieldManagerMaxLength is validation.FieldManagerMaxLength.
const fieldManagerMaxLength = 128

// managerOf is ?fieldManager, else what precedes the first "/" of the
// User-Agent, printable characters only, at most 128 bytes
// (prefixFromUserAgent): "kubectl-edit", "e2e.test".
func managerOf(r *http.Request) string {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	prefix, _, _ := strings.Cut(r.UserAgent(), "/")
	var b bytes.Buffer
	for _, c := range prefix {
		if !unicode.IsPrint(c) {
			continue
		}
		if b.Len()+utf8.RuneLen(c) > fieldManagerMaxLength {
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}

// applySchemas keeps each built-in kind's apply schema once read (the
// OpenAPI documents are large); a custom resource's is read per request
// from its definition, over the core schemas kept here.
type applySchemas struct {
	mu       sync.Mutex
	builtin  map[*registry.Resource]*patch.Schema
	coreOnce sync.Once
	core     map[string]json.RawMessage
}

// schemaOf is the resource's apply schema, or nil (every list atomic).
func (s *applySchemas) schemaOf(res *registry.Resource) *patch.Schema {
	if res.IsCustom() {
		if len(res.OpenAPISchema) == 0 {
			return nil
		}
		s.coreOnce.Do(func() { s.core, _ = discovery.CoreSchemas() })
		schema, err := patch.NewSchema(s.core, res.OpenAPISchema)
		if err != nil {
			return nil
		}
		return schema
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if schema, ok := s.builtin[res]; ok {
		return schema
	}
	var schema *patch.Schema
	if defs, root, ok := discovery.KindSchemas(res); ok {
		schema, _ = patch.NewSchema(defs, defs[root])
	}
	if s.builtin == nil {
		s.builtin = map[*registry.Resource]*patch.Schema{}
	}
	s.builtin[res] = schema
	return schema
}

// recordUpdate writes next's managedFields for a write that is not an
// apply: what it changed becomes the manager's (patch.RecordUpdate).
// Objects that never had managedFields are left without.
func (h *Handlers) recordUpdate(r *http.Request, ri RequestInfo, next, cur *api.Object) error {
	if !hasManagedFields(cur) && !hasManagedFields(next) {
		return nil
	}
	res := ri.Entry.Resource
	mf, err := patch.RecordUpdate(cur.AppendJSON(nil), next.AppendJSON(nil), patch.UpdateRequest{
		Manager: managerOf(r), APIVersion: res.APIVersion(), Subresource: ri.Subresource,
		Now: time.Now(), Schema: h.schemas.schemaOf(res)})
	if err != nil {
		return api.NewInternalError(err)
	}
	setExtra(&next.Metadata, "managedFields", mf)
	return nil
}

func hasManagedFields(o *api.Object) bool {
	for _, f := range o.Metadata.Extra {
		if f.Name == "managedFields" {
			return true
		}
	}
	return false
}

// setExtra sets a metadata member kept as raw JSON, in place or last;
// nil removes it.
func setExtra(m *api.ObjectMeta, name string, value json.RawMessage) {
	for i, f := range m.Extra {
		if f.Name != name {
			continue
		}
		if value == nil {
			m.Extra = append(m.Extra[:i:i], m.Extra[i+1:]...)
		} else {
			m.Extra[i].Value = value
		}
		return
	}
	if value != nil {
		m.Extra = append(m.Extra, api.Field{Name: name, Value: value})
	}
}
